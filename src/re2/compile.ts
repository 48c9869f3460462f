/**
 * Compiles a simplified RE2 tree to RE2's instruction list, instruction for instruction, in RE2's
 * allocation order: byte ranges (in UTF-8, byte sequences for non-ASCII runes, with RE2's suffix
 * cache and prefix trie for classes; in Latin-1, one byte range per class range), alternations, captures, empty-width assertions, the match, and the `.*?`
 * loop an unanchored program starts with. Instruction ids, patch lists and the order of allocation
 * follow RE2 because the flattening that yields the final program size depends on them.
 *
 * The number of instructions is capped: past the cap compilation stops and the caller treats the
 * regex as too large, so pathological input cannot take long.
 */
import { RUNE_MAX, RUNE_SELF, utf8Bytes } from './runes';
import { concat, Flag, Op, capture, type Re } from './regexp';

/** Instruction kinds (RE2's InstOp). */
export const Inst = {
  Alt: 0,
  AltMatch: 1,
  ByteRange: 2,
  Capture: 3,
  EmptyWidth: 4,
  Match: 5,
  Nop: 6,
  Fail: 7,
} as const;

/** A compiled program before RE2's optimization and flattening. */
export interface Program {
  op: number[];
  out: number[];
  out1: number[];
  lo: number[];
  hi: number[];
  fold: number[];
  /** Number of instructions (ids 0..size-1); instruction 0 is Fail. */
  size: number;
  start: number;
  startUnanchored: number;
}

/** Thrown when compilation would exceed the instruction cap. */
export class TooManyInstructions extends Error {}

/** A patch list: holes (instruction id * 2, +1 for out1) threaded through the holes themselves. */
interface PatchList {
  head: number;
  tail: number;
}

const NULL_LIST: PatchList = { head: 0, tail: 0 };

interface Frag {
  begin: number;
  end: PatchList;
  nullable: boolean;
}

/** Tree nodes visited per allowed instruction before compilation gives up (NoMatch pieces allocate none). */
const MAX_VISITS_PER_INSTRUCTION = 4;

const NO_MATCH: Frag = { begin: 0, end: NULL_LIST, nullable: false };

function mk(p: number): PatchList {
  return { head: p, tail: p };
}

class Compiler {
  readonly p: Program = {
    op: [],
    out: [],
    out1: [],
    lo: [],
    hi: [],
    fold: [],
    size: 0,
    start: 0,
    startUnanchored: 0,
  };
  private runeCache = new Map<number, number>();
  /** The class being compiled: the trie's root and the holes of its last bytes (RE2's rune_range_). */
  private rangeBegin = 0;
  private rangeEnd: PatchList = NULL_LIST;

  constructor(
    private readonly maxInstructions: number,
    private readonly latin1: boolean,
  ) {
    const fail = this.alloc();
    this.p.op[fail] = Inst.Fail;
  }

  private alloc(): number {
    const p = this.p;
    if (p.size + 1 > this.maxInstructions) throw new TooManyInstructions();
    const id = p.size++;
    p.op[id] = Inst.Fail;
    p.out[id] = 0;
    p.out1[id] = 0;
    p.lo[id] = 0;
    p.hi[id] = 0;
    p.fold[id] = 0;
    return id;
  }

  private patch(l: PatchList, to: number): void {
    let head = l.head;
    while (head !== 0) {
      const id = head >> 1;
      if (head & 1) {
        head = this.p.out1[id];
        this.p.out1[id] = to;
      } else {
        head = this.p.out[id];
        this.p.out[id] = to;
      }
    }
  }

  private append(l1: PatchList, l2: PatchList): PatchList {
    if (l1.head === 0) return l2;
    if (l2.head === 0) return l1;
    const id = l1.tail >> 1;
    if (l1.tail & 1) this.p.out1[id] = l2.head;
    else this.p.out[id] = l2.head;
    return { head: l1.head, tail: l2.tail };
  }

  cat(a: Frag, b: Frag): Frag {
    if (a.begin === 0 || b.begin === 0) return NO_MATCH;
    const p = this.p;
    if (p.op[a.begin] === Inst.Nop && a.end.head === a.begin << 1 && p.out[a.begin] === 0) {
      this.patch(a.end, b.begin);
      return b;
    }
    this.patch(a.end, b.begin);
    return { begin: a.begin, end: b.end, nullable: a.nullable && b.nullable };
  }

  private alt(a: Frag, b: Frag): Frag {
    if (a.begin === 0) return b;
    if (b.begin === 0) return a;
    const id = this.alloc();
    this.initAlt(id, a.begin, b.begin);
    return { begin: id, end: this.append(a.end, b.end), nullable: a.nullable || b.nullable };
  }

  private initAlt(id: number, out: number, out1: number): void {
    this.p.op[id] = Inst.Alt;
    this.p.out[id] = out;
    this.p.out1[id] = out1;
  }

  /** The Alt of a loop or option: `a` first when greedy; returns its id and its open hole. */
  private loopAlt(a: Frag, nongreedy: boolean): { id: number; hole: PatchList } {
    const id = this.alloc();
    if (nongreedy) {
      this.initAlt(id, 0, a.begin);
      return { id, hole: mk(id << 1) };
    }
    this.initAlt(id, a.begin, 0);
    return { id, hole: mk((id << 1) | 1) };
  }

  private plus(a: Frag, nongreedy: boolean): Frag {
    const { id, hole } = this.loopAlt(a, nongreedy);
    this.patch(a.end, id);
    return { begin: a.begin, end: hole, nullable: a.nullable };
  }

  star(a: Frag, nongreedy: boolean): Frag {
    if (a.nullable) return this.quest(this.plus(a, nongreedy), nongreedy);
    const { id, hole } = this.loopAlt(a, nongreedy);
    this.patch(a.end, id);
    return { begin: id, end: hole, nullable: true };
  }

  private quest(a: Frag, nongreedy: boolean): Frag {
    if (a.begin === 0) return this.nop();
    const { id, hole } = this.loopAlt(a, nongreedy);
    return { begin: id, end: this.append(hole, a.end), nullable: true };
  }

  byteRange(lo: number, hi: number, fold: boolean): Frag {
    const id = this.alloc();
    this.setByteRange(id, lo, hi, fold ? 1 : 0, 0);
    return { begin: id, end: mk(id << 1), nullable: false };
  }

  private setByteRange(id: number, lo: number, hi: number, fold: number, out: number): void {
    const p = this.p;
    p.op[id] = Inst.ByteRange;
    p.lo[id] = lo;
    p.hi[id] = hi;
    p.fold[id] = fold;
    p.out[id] = out;
  }

  private nop(): Frag {
    const id = this.alloc();
    this.p.op[id] = Inst.Nop;
    return { begin: id, end: mk(id << 1), nullable: true };
  }

  match(): Frag {
    const id = this.alloc();
    this.p.op[id] = Inst.Match;
    return { begin: id, end: NULL_LIST, nullable: false };
  }

  private emptyWidth(): Frag {
    const id = this.alloc();
    this.p.op[id] = Inst.EmptyWidth;
    return { begin: id, end: mk(id << 1), nullable: true };
  }

  private capture(a: Frag): Frag {
    if (a.begin === 0) return NO_MATCH;
    const id = this.alloc();
    const id1 = this.alloc();
    this.p.op[id] = Inst.Capture;
    this.p.out[id] = a.begin;
    this.p.op[id1] = Inst.Capture;
    this.patch(a.end, id1);
    return { begin: id, end: mk(id1 << 1), nullable: a.nullable };
  }

  // ----------------------------------------------------------------------------------------------
  // Rune ranges (UTF-8)

  private beginRange(): void {
    this.runeCache.clear();
    this.rangeBegin = 0;
    this.rangeEnd = NULL_LIST;
  }

  private uncachedSuffix(lo: number, hi: number, fold: boolean, next: number): number {
    const f = this.byteRange(lo, hi, fold);
    if (next !== 0) this.patch(f.end, next);
    else this.rangeEnd = this.append(this.rangeEnd, f.end);
    return f.begin;
  }

  private cacheKey(lo: number, hi: number, fold: number, next: number): number {
    return next * 0x20000 + lo * 0x200 + hi * 2 + fold;
  }

  private cachedSuffix(lo: number, hi: number, fold: boolean, next: number): number {
    const key = this.cacheKey(lo, hi, fold ? 1 : 0, next);
    const hit = this.runeCache.get(key);
    if (hit !== undefined) return hit;
    const id = this.uncachedSuffix(lo, hi, fold, next);
    this.runeCache.set(key, id);
    return id;
  }

  private endRange(): Frag {
    return { begin: this.rangeBegin, end: this.rangeEnd, nullable: false };
  }

  private isCachedSuffix(id: number): boolean {
    const p = this.p;
    return this.runeCache.has(this.cacheKey(p.lo[id], p.hi[id], p.fold[id], p.out[id]));
  }

  /** Adds a suffix to the class: a trie in UTF-8 (to share leading bytes), a chain of Alts in Latin-1. */
  private addSuffix(id: number): void {
    if (this.rangeBegin === 0) {
      this.rangeBegin = id;
    } else if (this.latin1) {
      const alt = this.alloc();
      this.initAlt(alt, this.rangeBegin, id);
      this.rangeBegin = alt;
    } else {
      this.rangeBegin = this.addSuffixRecursive(this.rangeBegin, id);
    }
  }

  private byteRangeEqual(a: number, b: number): boolean {
    const p = this.p;
    return p.lo[a] === p.lo[b] && p.hi[a] === p.hi[b] && p.fold[a] === p.fold[b];
  }

  /** Where the trie at root already has id's leading byte range (forward mode: the last branch only). */
  private findByteRange(root: number, id: number): { begin: number; hole: number } | undefined {
    const p = this.p;
    if (p.op[root] === Inst.ByteRange)
      return this.byteRangeEqual(root, id) ? { begin: root, hole: 0 } : undefined;
    if (p.op[root] === Inst.Alt && this.byteRangeEqual(p.out1[root], id)) {
      return { begin: root, hole: (root << 1) | 1 };
    }
    return undefined;
  }

  /** Merges suffix id into the trie at root, sharing a common leading byte range (RE2's trie). */
  private addSuffixRecursive(rootIn: number, id: number): number {
    const p = this.p;
    let root = rootIn;
    const f = this.findByteRange(root, id);
    if (!f) {
      const alt = this.alloc();
      this.initAlt(alt, root, id);
      return alt;
    }
    let br: number;
    if (f.hole === 0) br = root;
    else if (f.hole & 1) br = p.out1[f.begin];
    else br = p.out[f.begin];
    if (this.isCachedSuffix(br)) {
      const clone = this.alloc();
      this.setByteRange(clone, p.lo[br], p.hi[br], p.fold[br], p.out[br]);
      br = clone;
      if (f.hole === 0) root = br;
      else if (f.hole & 1) p.out1[f.begin] = br;
      else p.out[f.begin] = br;
    }
    const out = p.out[id];
    if (!this.isCachedSuffix(id)) {
      // RE2 frees the head it just allocated.
      p.op[id] = Inst.Alt;
      p.out[id] = 0;
      p.out1[id] = 0;
      p.lo[id] = 0;
      p.hi[id] = 0;
      p.fold[id] = 0;
      p.size--;
    }
    p.out[br] = this.addSuffixRecursive(p.out[br], out);
    return root;
  }

  private add80To10FFFF(): void {
    const cont1 = this.uncachedSuffix(0x80, 0xbf, false, 0);
    this.addSuffix(this.uncachedSuffix(0xc2, 0xdf, false, cont1));
    const cont2 = this.uncachedSuffix(0x80, 0xbf, false, cont1);
    this.addSuffix(this.uncachedSuffix(0xe0, 0xef, false, cont2));
    const cont3 = this.uncachedSuffix(0x80, 0xbf, false, cont2);
    this.addSuffix(this.uncachedSuffix(0xf0, 0xf4, false, cont3));
  }

  private addRuneRange(lo: number, hi: number, fold: boolean): void {
    if (this.latin1) {
      // Latin-1: runes are bytes.
      if (lo > hi || lo > 0xff) return;
      this.addSuffix(this.uncachedSuffix(lo, Math.min(hi, 0xff), fold, 0));
      return;
    }
    if (lo > hi) return;
    if (lo === 0x80 && hi === RUNE_MAX) {
      this.add80To10FFFF();
      return;
    }
    for (const max of [0x7f, 0x7ff, 0xffff]) {
      if (lo <= max && max < hi) {
        this.addRuneRange(lo, max, fold);
        this.addRuneRange(max + 1, hi, fold);
        return;
      }
    }
    if (hi < RUNE_SELF) {
      this.addSuffix(this.uncachedSuffix(lo, hi, fold, 0));
      return;
    }
    for (let i = 1; i < 4; i++) {
      const m = (1 << (6 * i)) - 1;
      if ((lo & ~m) !== (hi & ~m)) {
        if ((lo & m) !== 0) {
          this.addRuneRange(lo, lo | m, fold);
          this.addRuneRange((lo | m) + 1, hi, fold);
          return;
        }
        if ((hi & m) !== m) {
          this.addRuneRange(lo, (hi & ~m) - 1, fold);
          this.addRuneRange(hi & ~m, hi, fold);
          return;
        }
      }
    }
    const ulo = utf8Bytes(lo);
    const uhi = utf8Bytes(hi);
    const n = ulo.length;
    let id = 0;
    for (let i = n - 1; i >= 0; i--) {
      // Forward UTF-8: the leading byte is never cached, the last byte always, others iff a range.
      if (i === n - 1 || (ulo[i] < uhi[i] && i !== 0)) id = this.cachedSuffix(ulo[i], uhi[i], false, id);
      else id = this.uncachedSuffix(ulo[i], uhi[i], false, id);
    }
    this.addSuffix(id);
  }

  private literal(r: number, fold: boolean): Frag {
    if (this.latin1 || r < RUNE_SELF) return this.byteRange(r, r, fold);
    let f = NO_MATCH;
    utf8Bytes(r).forEach((b, i) => {
      const g = this.byteRange(b, b, false);
      f = i === 0 ? g : this.cat(f, g);
    });
    return f;
  }

  private charClass(re: Re): Frag {
    const cc = re.cc!;
    const foldAscii = cc.foldsAscii();
    this.beginRange();
    for (const { lo, hi } of cc.ranges) {
      if (foldAscii && 0x41 <= lo && hi <= 0x5a) continue;
      let fold = foldAscii;
      if ((lo <= 0x41 && 0x7a <= hi) || hi < 0x41 || 0x7a < lo || (0x5a < lo && hi < 0x61)) fold = false;
      this.addRuneRange(lo, hi, fold);
    }
    return this.endRange();
  }

  /**
   * The fragment for a tree: children first and in order, then the node (RE2's Compiler walk).
   * Iterative: expanded repetitions make trees thousands of levels deep.
   */
  walk(root: Re): Frag {
    const stack: { re: Re; children: Frag[] }[] = [{ re: root, children: [] }];
    let visits = 0;
    for (;;) {
      const top = stack[stack.length - 1];
      if (top.children.length < top.re.subs.length) {
        if (++visits > MAX_VISITS_PER_INSTRUCTION * this.maxInstructions) throw new TooManyInstructions();
        stack.push({ re: top.re.subs[top.children.length], children: [] });
        continue;
      }
      const frag = this.node(top.re, top.children);
      stack.pop();
      if (stack.length === 0) return frag;
      stack[stack.length - 1].children.push(frag);
    }
  }

  /** The fragment for one node given its children's (RE2's Compiler::PostVisit). */
  private node(re: Re, children: Frag[]): Frag {
    const nongreedy = (re.flags & Flag.NonGreedy) !== 0;
    const fold = (re.flags & Flag.FoldCase) !== 0;
    switch (re.op) {
      case Op.NoMatch:
        return NO_MATCH;
      case Op.EmptyMatch:
        return this.nop();
      case Op.Concat:
        return children.reduce((f, c, i) => (i === 0 ? c : this.cat(f, c)), NO_MATCH);
      case Op.Alternate:
        return children.reduce((f, c, i) => (i === 0 ? c : this.alt(f, c)), NO_MATCH);
      case Op.Star:
        return this.star(children[0], nongreedy);
      case Op.Plus:
        return this.plus(children[0], nongreedy);
      case Op.Quest:
        return this.quest(children[0], nongreedy);
      case Op.Literal:
        return this.literal(re.rune, fold);
      case Op.LiteralString:
        if (re.runes.length === 0) return this.nop();
        return re.runes.reduce(
          (f, r, i) => (i === 0 ? this.literal(r, fold) : this.cat(f, this.literal(r, fold))),
          NO_MATCH,
        );
      case Op.AnyChar:
        this.beginRange();
        this.addRuneRange(0, RUNE_MAX, false);
        return this.endRange();
      case Op.AnyByte:
        return this.byteRange(0x00, 0xff, false);
      case Op.CharClass:
        return this.charClass(re);
      case Op.Capture:
        return re.cap < 0 ? children[0] : this.capture(children[0]);
      case Op.BeginLine:
      case Op.EndLine:
      case Op.BeginText:
      case Op.EndText:
      case Op.WordBoundary:
      case Op.NoWordBoundary:
        return this.emptyWidth();
      default:
        throw new Error(`RE2 estimator: cannot compile node ${re.op}`);
    }
  }
}

/** Removes a leading `\A` (up to depth 4, as RE2's IsAnchorStart); returns whether it did. */
function stripAnchor(re: Re, depth: number, which: 'start' | 'end'): Re | undefined {
  if (depth >= 4) return undefined;
  const anchor = which === 'start' ? Op.BeginText : Op.EndText;
  if (re.op === Op.Concat && re.subs.length > 0) {
    const k = which === 'start' ? 0 : re.subs.length - 1;
    const sub = stripAnchor(re.subs[k], depth + 1, which);
    if (!sub) return undefined;
    const subs = re.subs.slice();
    subs[k] = sub;
    return concat(subs, re.flags);
  }
  if (re.op === Op.Capture) {
    const sub = stripAnchor(re.subs[0], depth + 1, which);
    return sub ? capture(sub, re.flags, re.cap) : undefined;
  }
  if (re.op === anchor) return { ...re, op: Op.EmptyMatch, subs: [], runes: [] };
  return undefined;
}

/**
 * RE2's forward program for a simplified tree, in Latin-1 or UTF-8, before optimization: anchors at either end are
 * recorded and removed, the match instruction appended, and an unanchored program gets its leading
 * non-greedy any-byte loop. Throws TooManyInstructions past maxInstructions.
 */
export function compileProgram(sre: Re, maxInstructions: number, latin1: boolean): Program {
  const c = new Compiler(maxInstructions, latin1);
  const startStripped = stripAnchor(sre, 0, 'start');
  const anchored = startStripped !== undefined;
  let re = startStripped ?? sre;
  re = stripAnchor(re, 0, 'end') ?? re;
  let all = c.cat(c.walk(re), c.match());
  c.p.start = all.begin;
  if (!anchored) all = c.cat(c.star(c.byteRange(0x00, 0xff, false), true), all);
  c.p.startUnanchored = all.begin;
  if (c.p.start === 0 && c.p.startUnanchored === 0) c.p.size = 1;
  return c.p;
}
