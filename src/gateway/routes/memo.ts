/**
 * Memoizes route compilation.
 *
 * Compiling a route is a pure function of the route object, of the policy, and of what the compiler
 * reads through the view (the Services its backendRefs name, ReferenceGrants for cross-namespace
 * references). The store keeps the very same object for an unchanged resource, so when the route
 * object and every object the last compilation read are identical, the last CompiledRoute is still
 * right and is returned as is. Its RouteModels then keep their identity from build to build, which
 * lets everything downstream (FleetModel reuse, translation, encoding) skip unchanged work.
 *
 * Dependencies are recorded by a view wrapper during compilation: each `get` with the object it
 * returned, each `list` with the objects of the list. Checking them costs a map lookup per `get`
 * and one pass per `list` (ReferenceGrants only, and only for cross-namespace references).
 * CompiledRoutes handed out are shared and must not be mutated. The memo is an object its owner
 * (the BuildMemo of build-memo.ts) passes in, not module state: two owners never share results.
 */
import type { KubeObject } from '../../store/objects';
import type { BackendPolicy } from '../backends';
import type { StoreView } from '../resolved';
import type { CompiledRoute } from './types';

type Compiler = (view: StoreView, obj: KubeObject, policy: BackendPolicy) => CompiledRoute;

interface Read {
  kind: string;
  namespace?: string;
  name?: string;
  /** get: the object returned (or undefined); list: the objects listed. */
  result: KubeObject | undefined | KubeObject[];
}

interface Memo {
  compiler: Compiler;
  view: StoreView;
  policy: string;
  reads: Read[];
  result: CompiledRoute;
}

/** Wraps a view and records each `get` and `list` with what it returned. */
class RecordingView implements StoreView {
  readonly reads: Read[] = [];
  constructor(private readonly inner: StoreView) {}

  get(kind: string, namespace: string, name: string): KubeObject | undefined {
    const result = this.inner.get(kind, namespace, name);
    this.reads.push({ kind, namespace, name, result });
    return result;
  }

  list(kind: string): KubeObject[] {
    const result = this.inner.list(kind);
    this.reads.push({ kind, result: [...result] });
    return result;
  }
}

/** Returns a string that is equal for equal policies (keys sorted). */
function policyKey(policy: BackendPolicy): string {
  return JSON.stringify([
    policy.externalNameServices === true,
    policy.endpoints ?? {},
    policy.refusedEndpoints?.fingerprint ?? '',
    // Whether a Service port with a TLS appProtocol is usable depends on its BackendTLSPolicy.
    policy.backendTls?.fingerprint ?? '',
  ]);
}

/** Returns whether every recorded read gives the very same object(s) in `view`. */
function unchanged(view: StoreView, reads: readonly Read[]): boolean {
  for (const r of reads) {
    if (r.name !== undefined) {
      if (view.get(r.kind, r.namespace!, r.name) !== r.result) return false;
    } else {
      const before = r.result as KubeObject[];
      const now = view.list(r.kind);
      if (now.length !== before.length) return false;
      for (let i = 0; i < now.length; i++) if (now[i] !== before[i]) return false;
    }
  }
  return true;
}

/** Remembers the last compilation of each route object, with what it read (see the file comment). */
export class CompiledRouteMemo {
  private readonly byRoute = new WeakMap<KubeObject, Memo>();
  /**
   * The last policy key made: an equal key reuses this instance, so the memos of 10,000 routes
   * share one string instead of holding a copy each (bench/README.md, "Steady RSS, session 18").
   */
  private policyText = '';

  /** Returns `compiler(view, obj, policy)`, or the previous result when nothing it depends on changed. */
  compile(compiler: Compiler, view: StoreView, obj: KubeObject, policy: BackendPolicy): CompiledRoute {
    let key = policyKey(policy);
    if (key === this.policyText) key = this.policyText;
    else this.policyText = key;
    const m = this.byRoute.get(obj);
    if (m && m.compiler === compiler && m.view === view && m.policy === key && unchanged(view, m.reads)) {
      return m.result;
    }
    const recording = new RecordingView(view);
    const result = compiler(recording, obj, policy);
    this.byRoute.set(obj, { compiler, view, policy: key, reads: recording.reads, result });
    return result;
  }
}
