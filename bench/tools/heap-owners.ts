/**
 * Attributes a V8 heap snapshot's live objects to their holders: streams the .heapsnapshot file
 * (too large for one JSON.parse at 5,000 ListenerSets), builds the dominator tree, and prints
 * (1) retained size summed by holder — an object's nearest dominating instance of a named class or
 * closure context, with the field or variable that leads down to it ("FileProvider.applied",
 * "context.routeMemo"), (2) self size by constructor, (3) the dominator tree down to a threshold.
 * A tool for finding what holds memory (bench/README.md "Steady RSS, session 14"), not a benchmark.
 *
 *   node --max-old-space-size=8192 dist/bench/tools/heap-owners.js FILE.heapsnapshot
 *     [--min-mib 1] [--tree-min-mib 4] [--depth 14] [--json OUT.json]
 *
 * WeakMap values: V8 records both the table and the key as retainers of a value, so a memo's
 * values would be dominated by some far ancestor of both; the key → value edge is ignored here, so a
 * memo (a module-level WeakMap) is charged with what it holds. Weak edges are ignored too.
 */
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';

interface Meta {
  node_fields: string[];
  node_types: [string[], ...unknown[]];
  edge_fields: string[];
  edge_types: [string[], ...unknown[]];
}

interface Snapshot {
  nodeFields: number;
  edgeFields: number;
  nodes: Uint32Array;
  edges: Uint32Array;
  strings: string[];
  meta: Meta;
}

const CHUNK = 1 << 24;

/** Reads the snapshot file in chunks: the header with JSON.parse, the number arrays and strings by hand. */
function readSnapshot(file: string): Snapshot {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.alloc(CHUNK);
  let len = 0;
  let pos = 0;
  let fileOff = 0;
  const fill = (): boolean => {
    if (pos < len) return true;
    len = fs.readSync(fd, buf, 0, CHUNK, fileOff);
    fileOff += len;
    pos = 0;
    return len > 0;
  };
  // Header: everything before "nodes":[.
  let header = '';
  for (;;) {
    if (!fill()) throw new Error('no "nodes" in the snapshot');
    const text = buf.toString('latin1', pos, len);
    const at = (header + text).indexOf('"nodes":[');
    if (at >= 0) {
      const consumed = at + '"nodes":['.length - header.length;
      header = (header + text).slice(0, at);
      pos += consumed;
      break;
    }
    header += text;
    pos = len;
  }
  const head = JSON.parse(header.replace(/,\s*$/, '') + '}') as {
    snapshot: { meta: Meta; node_count: number; edge_count: number };
  };
  const meta = head.snapshot.meta;
  const nodeFields = meta.node_fields.length;
  const edgeFields = meta.edge_fields.length;
  const readNumbers = (out: Uint32Array): void => {
    let n = 0;
    let cur = 0;
    let inNum = false;
    for (;;) {
      if (!fill()) throw new Error('snapshot ends inside a number array');
      for (; pos < len; pos++) {
        const c = buf[pos]!;
        if (c >= 48 && c <= 57) {
          cur = cur * 10 + (c - 48);
          inNum = true;
        } else {
          if (inNum) out[n++] = cur;
          cur = 0;
          inNum = false;
          if (c === 93) {
            pos++;
            if (n !== out.length) throw new Error(`expected ${out.length} numbers, read ${n}`);
            return;
          }
        }
      }
    }
  };
  const skipTo = (marker: string): void => {
    let carry = '';
    for (;;) {
      if (!fill()) throw new Error(`no ${marker} in the snapshot`);
      const text = carry + buf.toString('latin1', pos, len);
      const at = text.indexOf(marker);
      if (at >= 0) {
        pos += at + marker.length - carry.length;
        return;
      }
      carry = text.slice(-marker.length);
      pos = len;
    }
  };
  const nodes = new Uint32Array(head.snapshot.node_count * nodeFields);
  readNumbers(nodes);
  skipTo('"edges":[');
  const edges = new Uint32Array(head.snapshot.edge_count * edgeFields);
  readNumbers(edges);
  skipTo('"strings":[');
  // Strings: JSON string literals, each decoded with JSON.parse of its own bytes (UTF-8).
  const strings: string[] = [];
  let lit: Buffer[] = [];
  let inStr = false;
  let escaped = false;
  let start = 0;
  for (;;) {
    if (!fill()) break;
    for (; pos < len; pos++) {
      const c = buf[pos]!;
      if (!inStr) {
        if (c === 34) {
          inStr = true;
          start = pos;
        } else if (c === 93) {
          fs.closeSync(fd);
          return { nodeFields, edgeFields, nodes, edges, strings, meta };
        }
        continue;
      }
      if (escaped) escaped = false;
      else if (c === 92) escaped = true;
      else if (c === 34) {
        lit.push(buf.subarray(start, pos + 1));
        strings.push(JSON.parse(Buffer.concat(lit).toString('utf8')) as string);
        lit = [];
        inStr = false;
      }
    }
    if (inStr) {
      lit.push(Buffer.from(buf.subarray(start, len)));
      start = 0;
    }
  }
  fs.closeSync(fd);
  return { nodeFields, edgeFields, nodes, edges, strings, meta };
}

/** The graph in index form, with the dominator tree and retained sizes. */
interface Analysis {
  count: number;
  type: string[];
  name: string[];
  self: Float64Array;
  retained: Float64Array;
  idom: Int32Array;
  /** The parent on a shortest path from the root and the edge name that reached each node. */
  parent: Int32Array;
  parentEdge: string[];
}

function analyze(s: Snapshot): Analysis {
  const nf = s.nodeFields;
  const ef = s.edgeFields;
  const f = (name: string) => s.meta.node_fields.indexOf(name);
  const [nType, nName, nSelf, nEdges] = [f('type'), f('name'), f('self_size'), f('edge_count')];
  const e = (name: string) => s.meta.edge_fields.indexOf(name);
  const [eType, eName, eTo] = [e('type'), e('name_or_index'), e('to_node')];
  const nodeTypes = s.meta.node_types[0];
  const edgeTypes = s.meta.edge_types[0];
  const count = s.nodes.length / nf;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0; i < count; i++) firstEdge[i + 1] = firstEdge[i]! + s.nodes[i * nf + nEdges]!;
  const weak = edgeTypes.indexOf('weak');
  const elementT = edgeTypes.indexOf('element');
  const hiddenT = edgeTypes.indexOf('hidden');
  const edgeName = (k: number): string => {
    const t = s.edges[k * ef + eType]!;
    const v = s.edges[k * ef + eName]!;
    return t === elementT || t === hiddenT ? `[${v}]` : (s.strings[v] ?? '?');
  };
  const nId = f('id');
  /** Table id named by each "part of key (…) -> value (…) pair in WeakMap (table @N)" string. */
  const tableOf = new Map<number, number>();
  /** Skips weak edges, and a WeakMap value's edge from its key (the table's own edge stays). */
  const skip = (k: number, from: number): boolean => {
    const t = s.edges[k * ef + eType]!;
    if (t === weak) return true;
    if (t === elementT || t === hiddenT) return false;
    const si = s.edges[k * ef + eName]!;
    let table = tableOf.get(si);
    if (table === undefined) {
      const m = /pair in WeakMap \(table @(\d+)\)/.exec(s.strings[si] ?? '');
      table = m ? Number(m[1]) : -1;
      tableOf.set(si, table);
    }
    return table >= 0 && s.nodes[from * nf + nId] !== table;
  };
  // Iterative DFS from the root (node 0): postorder numbers and the DFS parent edge.
  const post = new Int32Array(count).fill(-1);
  const order = new Int32Array(count);
  const parent = new Int32Array(count).fill(-1);
  const parentEdgeIdx = new Int32Array(count).fill(-1);
  const visited = new Uint8Array(count);
  const stackNode = new Int32Array(count);
  const stackEdge = new Uint32Array(count);
  let sp = 1;
  let postN = 0;
  stackNode[0] = 0;
  stackEdge[0] = firstEdge[0]!;
  visited[0] = 1;
  while (sp > 0) {
    const v = stackNode[sp - 1]!;
    const k = stackEdge[sp - 1]!;
    if (k < firstEdge[v + 1]!) {
      stackEdge[sp - 1] = k + 1;
      if (skip(k, v)) continue;
      const w = s.edges[k * ef + eTo]! / nf;
      if (visited[w]) continue;
      visited[w] = 1;
      parent[w] = v;
      parentEdgeIdx[w] = k;
      stackNode[sp] = w;
      stackEdge[sp] = firstEdge[w]!;
      sp++;
    } else {
      post[v] = postN;
      order[postN++] = v;
      sp--;
    }
  }
  // Breadth-first from the root: each node's parent on a shortest path (the labels and the
  // first-reached attribution of shared objects).
  parent.fill(-1);
  parentEdgeIdx.fill(-1);
  const seen = new Uint8Array(count);
  const queue = new Int32Array(count);
  let qh = 0;
  let qt = 0;
  queue[qt++] = 0;
  seen[0] = 1;
  while (qh < qt) {
    const v = queue[qh++]!;
    for (let k = firstEdge[v]!; k < firstEdge[v + 1]!; k++) {
      if (skip(k, v)) continue;
      const w = s.edges[k * ef + eTo]! / nf;
      if (seen[w]) continue;
      seen[w] = 1;
      parent[w] = v;
      parentEdgeIdx[w] = k;
      queue[qt++] = w;
    }
  }
  // Predecessors (reverse edges) of reachable nodes, in CSR form.
  const predCount = new Uint32Array(count + 1);
  for (let v = 0; v < count; v++) {
    if (!visited[v]) continue;
    for (let k = firstEdge[v]!; k < firstEdge[v + 1]!; k++) {
      if (skip(k, v)) continue;
      predCount[s.edges[k * ef + eTo]! / nf + 1]!++;
    }
  }
  for (let i = 0; i < count; i++) predCount[i + 1]! += predCount[i]!;
  const preds = new Int32Array(predCount[count]!);
  const fillAt = predCount.slice(0, count);
  for (let v = 0; v < count; v++) {
    if (!visited[v]) continue;
    for (let k = firstEdge[v]!; k < firstEdge[v + 1]!; k++) {
      if (skip(k, v)) continue;
      const w = s.edges[k * ef + eTo]! / nf;
      preds[fillAt[w]!++] = v;
    }
  }
  // Cooper–Harvey–Kennedy: iterate in reverse postorder until the dominators settle.
  const domPost = new Int32Array(postN).fill(-1);
  const rootPost = post[0]!;
  domPost[rootPost] = rootPost;
  let changed = true;
  while (changed) {
    changed = false;
    for (let p = rootPost - 1; p >= 0; p--) {
      const v = order[p]!;
      let nd = -1;
      for (let i = predCount[v]!; i < predCount[v + 1]!; i++) {
        let a = post[preds[i]!]!;
        if (a < 0 || domPost[a] === -1) continue;
        if (nd === -1) {
          nd = a;
          continue;
        }
        let b = nd;
        while (a !== b) {
          while (a < b) a = domPost[a]!;
          while (b < a) b = domPost[b]!;
        }
        nd = a;
      }
      if (nd !== -1 && domPost[p] !== nd) {
        domPost[p] = nd;
        changed = true;
      }
    }
  }
  const idom = new Int32Array(count).fill(-1);
  const self = new Float64Array(count);
  const retained = new Float64Array(count);
  for (let v = 0; v < count; v++) self[v] = s.nodes[v * nf + nSelf]!;
  for (let p = 0; p < postN; p++) {
    const v = order[p]!;
    retained[v] += self[v]!;
    if (v === 0) continue;
    const d = order[domPost[p]!]!;
    idom[v] = d;
    retained[d] += retained[v]!;
  }
  const type = new Array<string>(count);
  const name = new Array<string>(count);
  for (let v = 0; v < count; v++) {
    type[v] = nodeTypes[s.nodes[v * nf + nType]!]!;
    name[v] = s.strings[s.nodes[v * nf + nName]!]!;
  }
  const parentEdge = new Array<string>(count);
  for (let v = 0; v < count; v++) parentEdge[v] = parentEdgeIdx[v]! >= 0 ? edgeName(parentEdgeIdx[v]!) : '';
  return { count, type, name, self, retained, idom, parent, parentEdge };
}

const GENERIC = new Set([
  'Object',
  'Array',
  'Map',
  'Set',
  'WeakMap',
  'WeakSet',
  'Promise',
  'Function',
  'Uint8Array',
  'Buffer',
  'ArrayBuffer',
  'Error',
  'Date',
  'RegExp',
]);

/** Whether a node names its holdings: an instance of a named class or a closure context. */
function isHolder(a: Analysis, v: number): boolean {
  const n = a.name[v]!;
  if (n === 'system / Context') return true;
  return a.type[v] === 'object' && /^[A-Z_$][\w$]*$/.test(n) && !GENERIC.has(n);
}

/** The holder label of each node: the nearest dominating holder and the edge leading down from it. */
function holderOf(a: Analysis, v: number, cache: Map<number, string>): string {
  const path: number[] = [];
  let child = v;
  let cur = a.idom[v]!;
  let label = '(root)';
  while (cur >= 0) {
    const hit = cache.get(child);
    if (hit !== undefined) {
      label = hit;
      break;
    }
    path.push(child);
    if (isHolder(a, cur)) {
      const via = a.parent[child] === cur ? a.parentEdge[child] : `(${a.name[child]})`;
      const owner = a.name[cur] === 'system / Context' ? 'context' : a.name[cur];
      label = `${owner}.${via}`;
      break;
    }
    child = cur;
    cur = a.idom[cur]!;
  }
  for (const p of path) cache.set(p, label);
  return label;
}

/** The holder on the shortest path from the root: shared objects go to the holder that reaches them first. */
function firstHolderOf(a: Analysis, v: number, cache: Map<number, string>): string {
  const path: number[] = [];
  let child = v;
  let cur = a.parent[v]!;
  let label = '(root)';
  while (cur >= 0) {
    const hit = cache.get(child);
    if (hit !== undefined) {
      label = hit;
      break;
    }
    path.push(child);
    if (isHolder(a, cur)) {
      const owner = a.name[cur] === 'system / Context' ? 'context' : a.name[cur];
      label = `${owner}.${a.parentEdge[child]}`;
      break;
    }
    child = cur;
    cur = a.parent[cur]!;
  }
  for (const p of path) cache.set(p, label);
  return label;
}

function mib(n: number): string {
  return (n / 1048576).toFixed(1);
}

function main(): void {
  const { values, positionals } = parseArgs({
    options: {
      'min-mib': { type: 'string', default: '1' },
      'tree-min-mib': { type: 'string', default: '4' },
      depth: { type: 'string', default: '14' },
      json: { type: 'string' },
    },
    allowPositionals: true,
  });
  const file = positionals[0];
  if (!file) throw new Error('usage: heap-owners FILE.heapsnapshot');
  const snap = readSnapshot(file);
  const a = analyze(snap);
  const total = a.retained[0]!;
  console.log(`nodes ${a.count}, live ${mib(total)} MiB`);
  const minBytes = Number(values['min-mib']) * 1048576;
  // (1) by holder: each node's self size charged to its holder label.
  const cache = new Map<number, string>();
  const byHolder = new Map<string, number>();
  for (let v = 0; v < a.count; v++) {
    if (a.idom[v]! < 0 && v !== 0) continue;
    const h = v === 0 ? '(root)' : holderOf(a, v, cache);
    byHolder.set(h, (byHolder.get(h) ?? 0) + a.self[v]!);
  }
  const holders = [...byHolder].sort((x, y) => y[1] - x[1]).filter(([, b]) => b >= minBytes);
  console.log('\n== retained by holder, dominator tree (MiB) ==');
  for (const [h, b] of holders) console.log(`${mib(b).padStart(8)}  ${h}`);
  // (1b) by the holder that reaches an object first (breadth-first), for what no holder dominates.
  const firstCache = new Map<number, string>();
  const byFirst = new Map<string, number>();
  for (let v = 1; v < a.count; v++) {
    if (a.idom[v]! < 0) continue;
    const h = firstHolderOf(a, v, firstCache);
    byFirst.set(h, (byFirst.get(h) ?? 0) + a.self[v]!);
  }
  const firsts = [...byFirst].sort((x, y) => y[1] - x[1]).filter(([, b]) => b >= minBytes);
  console.log('\n== by the holder reaching it first, breadth-first (MiB) ==');
  for (const [h, b] of firsts) console.log(`${mib(b).padStart(8)}  ${h}`);
  // (2) self size by constructor.
  const byCtor = new Map<string, [number, number]>();
  for (let v = 0; v < a.count; v++) {
    if (a.idom[v]! < 0 && v !== 0) continue;
    const k = `${a.type[v]}:${a.type[v] === 'string' || a.type[v] === 'concatenated string' ? '' : a.name[v]}`;
    const c = byCtor.get(k) ?? [0, 0];
    c[0] += a.self[v]!;
    c[1]++;
    byCtor.set(k, c);
  }
  const ctors = [...byCtor].sort((x, y) => y[1][0] - x[1][0]).filter(([, c]) => c[0] >= minBytes);
  console.log('\n== self size by constructor (MiB, count) ==');
  for (const [k, c] of ctors) console.log(`${mib(c[0]).padStart(8)}  ${String(c[1]).padStart(9)}  ${k}`);
  // (2b) duplicate strings: copies of the same text beyond the first, by holder.
  const firstCopy = new Map<string, number>();
  const wasteByHolder = new Map<string, number>();
  const wasteByText = new Map<string, [number, number]>();
  let waste = 0;
  for (let v = 1; v < a.count; v++) {
    if (a.idom[v]! < 0 || a.type[v] !== 'string') continue;
    const text = a.name[v]!;
    if (!firstCopy.has(text)) {
      firstCopy.set(text, v);
      continue;
    }
    waste += a.self[v]!;
    const h = firstHolderOf(a, v, firstCache);
    wasteByHolder.set(h, (wasteByHolder.get(h) ?? 0) + a.self[v]!);
    const t = wasteByText.get(text) ?? [0, 0];
    t[0] += a.self[v]!;
    t[1]++;
    wasteByText.set(text, t);
  }
  console.log(`\n== duplicate strings: ${mib(waste)} MiB beyond one copy each; by holder (MiB) ==`);
  for (const [h, b] of [...wasteByHolder].sort((x, y) => y[1] - x[1]).filter(([, b]) => b >= minBytes / 4))
    console.log(`${mib(b).padStart(8)}  ${h}`);
  console.log('-- most wasteful texts (MiB, extra copies) --');
  for (const [t, [b, n]] of [...wasteByText].sort((x, y) => y[1][0] - x[1][0]).slice(0, 25))
    console.log(`${mib(b).padStart(8)}  ${String(n).padStart(7)}  ${JSON.stringify(t.slice(0, 60))}`);
  // (3) dominator tree down to a threshold.
  const treeMin = Number(values['tree-min-mib']) * 1048576;
  const children = new Map<number, number[]>();
  for (let v = 0; v < a.count; v++) {
    const d = a.idom[v]!;
    if (d < 0 || a.retained[v]! < treeMin) continue;
    let l = children.get(d);
    if (!l) children.set(d, (l = []));
    l.push(v);
  }
  console.log('\n== dominator tree (retained MiB) ==');
  const depthMax = Number(values.depth);
  const walk = (v: number, depth: number): void => {
    const via = a.parentEdge[v] ? `${a.parentEdge[v]} → ` : '';
    console.log(`${'  '.repeat(depth)}${mib(a.retained[v]!)}  ${via}${a.type[v]} ${a.name[v]!.slice(0, 60)}`);
    if (depth >= depthMax) return;
    for (const c of (children.get(v) ?? []).sort((x, y) => a.retained[y]! - a.retained[x]!))
      walk(c, depth + 1);
  };
  walk(0, 0);
  if (values.json) {
    fs.writeFileSync(
      values.json,
      JSON.stringify(
        {
          file,
          liveMiB: Number(mib(total)),
          byHolderMiB: Object.fromEntries(holders.map(([h, b]) => [h, Number(mib(b))])),
          byFirstHolderMiB: Object.fromEntries(firsts.map(([h, b]) => [h, Number(mib(b))])),
          duplicateStringsMiB: Number(mib(waste)),
          byConstructorMiB: Object.fromEntries(
            ctors.map(([k, c]) => [k, { mib: Number(mib(c[0])), count: c[1] }]),
          ),
        },
        null,
        2,
      ) + '\n',
    );
  }
}

main();
