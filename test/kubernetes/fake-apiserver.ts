import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../src/kubernetes/client';

/**
 * An in-memory imitation of the parts of the Kubernetes API the provider, the status writer and
 * the lease use: LIST with limit/continue and fieldSelector type=…, WATCH from a
 * resourceVersion (with BOOKMARK and a compaction window that answers 410 Expired), GET, POST,
 * PUT with resourceVersion preconditions (409), PUT …/status, DELETE. Faults are injected with
 * `failNext` and `dropWatches`. Plain HTTP on loopback; unit tests only.
 */

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

interface Event {
  rv: number;
  collection: string;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Obj;
}

export interface RequestRecord {
  method: string;
  path: string;
  query: Record<string, string>;
  body?: unknown;
  /** The bearer token the request carried: tells apart clients made with different tokens. */
  token?: string;
  /** When the request arrived (epoch ms). */
  at: number;
}

export class FakeApiServer {
  private server!: http.Server;
  private rv = 100;
  /** collection path → name key ("ns/name") → object */
  private readonly objects = new Map<string, Map<string, Obj>>();
  private readonly events: Event[] = [];
  /** Events at or below this resourceVersion are compacted away (watching from older → 410). */
  compactedRv = 0;
  /** Collections that answer 404 (a CRD that is not installed). */
  readonly missing = new Set<string>();
  readonly requests: RequestRecord[] = [];
  private readonly watchers = new Set<{ collection: string; res: http.ServerResponse; selector?: string }>();
  private readonly faults: {
    match: (r: RequestRecord) => boolean;
    status: number;
    times: number;
    details?: Record<string, unknown>;
  }[] = [];
  /** Delay before every non-watch answer (ms): lets a test see how many requests overlap. */
  delayMs = 0;
  /** Most non-watch requests in flight at once, overall and for any one object. */
  maxInFlight = 0;
  maxInFlightOnePath = 0;
  private inFlight = 0;
  private held: (() => void)[] | undefined;
  private readonly inFlightByPath = new Map<string, number>();
  url = '';

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.dropWatches();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  /** A KubeClient talking to this server, authenticated with `token`. */
  client(token = 'fake-token'): KubeClient {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server: this.url, skipTLSVerify: true }],
      users: [{ name: 'u', token }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'u' }],
      currentContext: 'fake',
    });
    return new KubeClient(kc);
  }

  /** Writes a kubeconfig file for this server. */
  kubeconfigFile(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-kube-'));
    const file = path.join(dir, 'kubeconfig');
    fs.writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: fake',
        '  cluster:',
        `    server: ${this.url}`,
        '    insecure-skip-tls-verify: true',
        'users:',
        '- name: u',
        '  user:',
        '    token: fake-token',
        'contexts:',
        '- name: fake',
        '  context: {cluster: fake, user: u}',
        'current-context: fake',
        '',
      ].join('\n'),
    );
    return file;
  }

  /** The next `times` requests matching get `status` (e.g. 500, 409, 410), with Status `details`. */
  failNext(
    match: (r: RequestRecord) => boolean,
    status: number,
    times = 1,
    details?: Record<string, unknown>,
  ): void {
    this.faults.push({ match, status, times, details });
  }

  /** Ends every open watch stream (as an API server restart would). */
  dropWatches(): void {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
  }

  get watchCount(): number {
    return this.watchers.size;
  }

  /** Forgets the event history so that watches from any earlier resourceVersion get 410. */
  compact(): void {
    this.compactedRv = this.rv;
    this.events.length = 0;
  }

  // --- direct manipulation (what kubectl would do) ---

  upsert(collection: string, obj: Obj): Obj {
    const bucket = this.bucket(collection);
    const key = keyOf(obj);
    const existing = bucket.get(key);
    const stored: Obj = JSON.parse(JSON.stringify(obj));
    stored.metadata.resourceVersion = String(++this.rv);
    stored.metadata.uid = existing?.metadata.uid ?? `uid-${this.rv}`;
    const specChanged = !existing || JSON.stringify(existing.spec) !== JSON.stringify(stored.spec);
    stored.metadata.generation = ((existing?.metadata.generation as number) ?? 0) + (specChanged ? 1 : 0);
    if (existing && stored.status === undefined) stored.status = existing.status;
    bucket.set(key, stored);
    this.emit({ rv: this.rv, collection, type: existing ? 'MODIFIED' : 'ADDED', object: stored });
    return stored;
  }

  remove(collection: string, namespace: string | undefined, name: string): boolean {
    const bucket = this.bucket(collection);
    const key = `${namespace ?? ''}/${name}`;
    const existing = bucket.get(key);
    if (!existing) return false;
    bucket.delete(key);
    const gone: Obj = JSON.parse(JSON.stringify(existing));
    gone.metadata.resourceVersion = String(++this.rv);
    this.emit({ rv: this.rv, collection, type: 'DELETED', object: gone });
    return true;
  }

  get(collection: string, namespace: string | undefined, name: string): Obj | undefined {
    return this.bucket(collection).get(`${namespace ?? ''}/${name}`);
  }

  private bucket(collection: string): Map<string, Obj> {
    let b = this.objects.get(collection);
    if (!b) this.objects.set(collection, (b = new Map()));
    return b;
  }

  private emit(e: Event): void {
    this.events.push(e);
    for (const w of this.watchers) {
      if (w.collection === e.collection && matchesSelector(e.object, w.selector)) {
        w.res.write(JSON.stringify({ type: e.type, object: e.object }) + '\n');
      }
    }
  }

  /** Sends a BOOKMARK with the current resourceVersion to every watch of a collection. */
  bookmark(collection: string): void {
    for (const w of this.watchers) {
      if (w.collection !== collection) continue;
      w.res.write(
        JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(this.rv) } } }) +
          '\n',
      );
    }
  }

  // --- HTTP ---

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const text = Buffer.concat(chunks).toString('utf8');
      const record: RequestRecord = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        body: text ? JSON.parse(text) : undefined,
        token: /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1],
        at: Date.now(),
      };
      if (record.query.watch === 'true') record.method = 'WATCH';
      this.requests.push(record);
      if (record.method === 'WATCH') return this.answer(record, res);
      this.countInFlight(record.path, +1);
      res.on('close', () => this.countInFlight(record.path, -1));
      if (this.held) this.held.push(() => this.answer(record, res));
      else if (this.delayMs > 0) setTimeout(() => this.answer(record, res), this.delayMs);
      else this.answer(record, res);
    });
  }

  /** Returns how many non-watch requests are in flight now (arrived and not yet answered). */
  get inFlightNow(): number {
    return this.inFlight;
  }

  /**
   * Holds every non-watch answer until releaseHeld(): a test can then be sure requests are still
   * in flight while it acts, whatever the CPU load (a delay could expire first).
   */
  holdAnswers(): void {
    this.held ??= [];
  }

  /** Answers the held requests and stops holding. */
  releaseHeld(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const answer of held) answer();
  }

  /** Tracks requests in flight, overall and per object (a status subresource counts as its object). */
  private countInFlight(requestPath: string, delta: number): void {
    const path = requestPath.replace(/\/status$/, '');
    this.inFlight += delta;
    const onPath = (this.inFlightByPath.get(path) ?? 0) + delta;
    this.inFlightByPath.set(path, onPath);
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    this.maxInFlightOnePath = Math.max(this.maxInFlightOnePath, onPath);
  }

  /** Answers one request: an injected fault if one matches, else the imitation of the API. */
  private answer(record: RequestRecord, res: http.ServerResponse): void {
    const fault = this.faults.find((f) => f.times > 0 && f.match(record));
    if (fault) {
      fault.times--;
      return send(res, fault.status, { ...status(fault.status, 'injected fault'), details: fault.details });
    }
    this.route(record, res);
  }

  private route(r: RequestRecord, res: http.ServerResponse): void {
    const parsed = parsePath(r.path);
    if (!parsed) return send(res, 404, status(404, 'not found'));
    const { collection, name, namespace, subresource } = parsed;
    if (this.missing.has(collection))
      return send(res, 404, status(404, 'the server could not find the requested resource'));
    if (r.method === 'WATCH') return this.watch(collection, r, res);
    const bucket = this.bucket(collection);
    if (!name) {
      if (r.method === 'GET') return this.list(collection, r, res);
      if (r.method === 'POST') {
        const obj = r.body as Obj;
        if (namespace) obj.metadata.namespace = namespace;
        if (bucket.has(keyOf(obj))) return send(res, 409, status(409, 'already exists', 'AlreadyExists'));
        return send(res, 201, this.upsert(collection, obj));
      }
      return send(res, 405, status(405, 'method not allowed'));
    }
    const key = `${namespace ?? ''}/${name}`;
    const existing = bucket.get(key);
    if (r.method === 'GET')
      return existing ? send(res, 200, existing) : send(res, 404, status(404, `${name} not found`));
    if (r.method === 'DELETE') {
      return this.remove(collection, namespace, name)
        ? send(res, 200, status(200, 'deleted'))
        : send(res, 404, status(404, 'not found'));
    }
    if (r.method === 'PUT') {
      if (!existing) return send(res, 404, status(404, `${name} not found`));
      const body = r.body as Obj;
      const rv = body.metadata?.resourceVersion;
      if (rv !== undefined && rv !== existing.metadata.resourceVersion) {
        return send(res, 409, status(409, 'the object has been modified', 'Conflict'));
      }
      const next: Obj =
        subresource === 'status'
          ? { ...existing, status: body.status }
          : { ...body, status: existing.status, metadata: { ...body.metadata } };
      return send(res, 200, this.upsert(collection, next));
    }
    send(res, 405, status(405, 'method not allowed'));
  }

  private list(collection: string, r: RequestRecord, res: http.ServerResponse): void {
    const all = [...this.bucket(collection).values()]
      .filter((o) => matchesSelector(o, r.query.fieldSelector))
      .sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
    const limit = Number(r.query.limit ?? 0) || all.length || 1;
    const start = Number(r.query.continue ?? 0) || 0;
    const items = all.slice(start, start + limit);
    const more = start + limit < all.length;
    send(res, 200, {
      kind: 'List',
      apiVersion: 'v1',
      metadata: { resourceVersion: String(this.rv), continue: more ? String(start + limit) : undefined },
      // LIST items carry no apiVersion/kind, like the real API server.
      items: items.map((o) => {
        const copy = { ...o };
        delete copy.apiVersion;
        delete copy.kind;
        return copy;
      }),
    });
  }

  private watch(collection: string, r: RequestRecord, res: http.ServerResponse): void {
    const from = Number(r.query.resourceVersion || 0);
    res.writeHead(200, { 'content-type': 'application/json' });
    if (from && from < this.compactedRv) {
      res.end(
        JSON.stringify({ type: 'ERROR', object: status(410, 'too old resource version', 'Expired') }) + '\n',
      );
      return;
    }
    for (const e of this.events) {
      if (e.rv > from && e.collection === collection && matchesSelector(e.object, r.query.fieldSelector)) {
        res.write(JSON.stringify({ type: e.type, object: e.object }) + '\n');
      }
    }
    const w = { collection, res, selector: r.query.fieldSelector };
    this.watchers.add(w);
    res.on('close', () => this.watchers.delete(w));
  }
}

function keyOf(o: Obj): string {
  return `${(o.metadata.namespace as string | undefined) ?? ''}/${String(o.metadata.name)}`;
}

function matchesSelector(o: Obj, selector?: string): boolean {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const [field, value] = term.split('=');
    return field === 'type' ? o.type === value : true;
  });
}

function parsePath(
  p: string,
): { collection: string; namespace?: string; name?: string; subresource?: string } | undefined {
  const parts = p.split('/').filter(Boolean);
  let i: number;
  let prefix: string;
  if (parts[0] === 'api') {
    prefix = `/api/${parts[1]}`;
    i = 2;
  } else if (parts[0] === 'apis') {
    prefix = `/apis/${parts[1]}/${parts[2]}`;
    i = 3;
  } else return undefined;
  let namespace: string | undefined;
  if (parts[i] === 'namespaces' && parts.length > i + 2) {
    namespace = decodeURIComponent(parts[i + 1]);
    i += 2;
  }
  const plural = parts[i];
  if (!plural) return undefined;
  return {
    collection: `${prefix}/${plural}`,
    namespace,
    name: parts[i + 1] ? decodeURIComponent(parts[i + 1]) : undefined,
    subresource: parts[i + 2],
  };
}

function status(code: number, message: string, reason?: string) {
  return { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, message, reason };
}

function send(res: http.ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
