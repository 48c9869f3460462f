/**
 * The size RE2 reports as ProgramSize(): the instruction count after RE2's peephole optimization
 * (no-ops bypassed, `\C*` loops before a match marked) and flattening (every alternation tree
 * replaced by a list of the instructions it reaches). Follows RE2's Prog::Optimize and
 * Prog::Flatten, counting the flat instructions instead of building them.
 */
import { Inst, type Program } from './compile';

/** Whether instruction id is a match, possibly after captures and no-ops (RE2's IsMatch). */
function isMatch(p: Program, idIn: number): boolean {
  let id = idIn;
  for (;;) {
    const op = p.op[id];
    if (op === Inst.Capture || op === Inst.Nop) id = p.out[id];
    else return op === Inst.Match;
  }
}

/** Visits instructions reachable from start in RE2's work-queue order (its SparseSet Workq). */
function reachableFrom(
  p: Program,
  start: number,
  visit: (id: number, queue: (id: number) => void) => void,
): void {
  const seen = new Uint8Array(p.size);
  const order: number[] = [];
  const queue = (id: number): void => {
    if (id !== 0 && !seen[id]) {
      seen[id] = 1;
      order.push(id);
    }
  };
  queue(start);
  for (let k = 0; k < order.length; k++) visit(order[k], queue);
}

/** RE2's Prog::Optimize, in place. */
export function optimize(p: Program): void {
  const skipNops = (from: number): number => {
    let j = from;
    while (j !== 0 && p.op[j] === Inst.Nop) j = p.out[j];
    return j;
  };
  reachableFrom(p, p.start, (id, queue) => {
    p.out[id] = skipNops(p.out[id]);
    queue(p.out[id]);
    if (p.op[id] === Inst.Alt) {
      p.out1[id] = skipNops(p.out1[id]);
      queue(p.out1[id]);
    }
  });
  reachableFrom(p, p.start, (id, queue) => {
    queue(p.out[id]);
    if (p.op[id] !== Inst.Alt) return;
    queue(p.out1[id]);
    const j = p.out[id];
    const k = p.out1[id];
    const anyByteBack = (x: number): boolean =>
      p.op[x] === Inst.ByteRange && p.out[x] === id && p.lo[x] === 0x00 && p.hi[x] === 0xff;
    if ((anyByteBack(j) && isMatch(p, k)) || (isMatch(p, j) && anyByteBack(k))) p.op[id] = Inst.AltMatch;
  });
}

function isEpsilon(op: number): boolean {
  return op === Inst.Alt || op === Inst.AltMatch || op === Inst.Nop;
}

/** Scratch state for the flattening passes over one program. */
class Flattener {
  /** Roots in insertion order (RE2's SparseArray rootmap) and a membership mark. */
  readonly roots: number[] = [];
  private readonly isRoot: Uint8Array;
  /** Alt predecessors of each instruction. */
  readonly preds: (number[] | undefined)[] = [];
  /** Visit marks: an instruction is reached in the current pass when its stamp equals the pass. */
  private readonly stamp: Int32Array;
  private pass = 0;

  constructor(readonly p: Program) {
    this.isRoot = new Uint8Array(p.size);
    this.stamp = new Int32Array(p.size);
  }

  addRoot(id: number): void {
    if (!this.isRoot[id]) {
      this.isRoot[id] = 1;
      this.roots.push(id);
    }
  }

  hasRoot(id: number): boolean {
    return this.isRoot[id] === 1;
  }

  /** Starts a pass; `reached` then tells whether an instruction was visited in it. */
  newPass(): void {
    this.pass++;
  }

  /** Marks id visited in this pass; false if it already was. */
  visit(id: number): boolean {
    if (this.stamp[id] === this.pass) return false;
    this.stamp[id] = this.pass;
    return true;
  }

  reached(id: number): boolean {
    return this.stamp[id] === this.pass;
  }

  /**
   * The instructions reachable from root by epsilon moves, stopping at (and including) other
   * roots, in visit order; leaves them marked for `reached`.
   */
  epsilonClosure(root: number): number[] {
    const p = this.p;
    this.newPass();
    const out: number[] = [];
    const stack = [root];
    while (stack.length) {
      let id = stack.pop()!;
      while (this.visit(id)) {
        out.push(id);
        if (id !== root && this.isRoot[id]) break;
        const op = p.op[id];
        if (op === Inst.Alt || op === Inst.AltMatch) {
          stack.push(p.out1[id]);
          id = p.out[id];
        } else if (op === Inst.Nop) {
          id = p.out[id];
        } else {
          break;
        }
      }
    }
    return out;
  }
}

/** The number of instructions RE2's Prog::Flatten produces. */
export function flattenedSize(p: Program): number {
  const f = new Flattener(p);
  f.addRoot(0);
  f.addRoot(p.startUnanchored);
  f.addRoot(p.start);
  // First pass: the out of every non-epsilon instruction is a root; Alt predecessors are recorded.
  f.newPass();
  const stack = [p.startUnanchored];
  while (stack.length) {
    let id = stack.pop()!;
    while (f.visit(id)) {
      const op = p.op[id];
      if (op === Inst.Alt || op === Inst.AltMatch) {
        for (const out of [p.out[id], p.out1[id]]) (f.preds[out] ??= []).push(id);
        stack.push(p.out1[id]);
        id = p.out[id];
      } else if (op === Inst.ByteRange || op === Inst.Capture || op === Inst.EmptyWidth) {
        f.addRoot(p.out[id]);
        id = p.out[id];
      } else if (op === Inst.Nop) {
        id = p.out[id];
      } else {
        break;
      }
    }
  }
  // Second pass, highest id first: an instruction with a predecessor outside the epsilon closure
  // of the root that reaches it is a root too.
  const sorted = f.roots.slice().sort((a, b) => a - b);
  for (let k = sorted.length - 1; k > 0; k--) {
    const root = sorted[k];
    if (root === p.startUnanchored || root === p.start) continue;
    const closure = f.epsilonClosure(root);
    for (const id of closure) {
      if ((f.preds[id] ?? []).some((pred) => !f.reached(pred))) f.addRoot(id);
    }
  }
  // Third pass: each root's list holds the non-epsilon instructions its closure reaches, a no-op
  // for each other root reached, and one extra instruction per AltMatch.
  let size = 0;
  for (const root of f.roots) {
    for (const id of f.epsilonClosure(root)) {
      if ((id !== root && f.hasRoot(id)) || !isEpsilon(p.op[id]) || p.op[id] === Inst.AltMatch) size++;
    }
  }
  return size;
}
