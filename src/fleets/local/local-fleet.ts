import type { Logger } from '../../observability/logger';
import type { BackoffPolicy } from './backoff';
import { desiredLocalEnvoys, planLocalEnvoys } from './desired';
import type { EnvoyCommandOptions } from './envoy-command';
import { writeEnvoyFiles } from './envoy-files';
import type { EnvoyConnection } from './envoy-files';
import { SupervisedEnvoy } from './supervised-envoy';

/**
 * Convoy's local Envoy fleet (docs/operations.md §14): one supervised Envoy child process per
 * Gateway Convoy serves. It follows its source, the fleet models Convoy publishes
 * (model-source.ts: accepted Gateways and those holding their last good configuration): a new
 * one gets an Envoy, a removed one has its Envoy drained and stopped, and each Envoy runs with
 * its Gateway's EnvoyFleet settings over the flags'. Which listeners an Envoy opens is not decided here: its node identity
 * names its Gateway, and Convoy serves it that Gateway's merged listeners (ListenerSets included).
 */

/** Where the fleets come from (model-source.ts; XdsCache has the shape too, without settings). */
export interface FleetSource {
  fleets(): string[];
  onChange(listener: () => void): () => void;
  /** What a Gateway's parameters set for its Envoy (log level, drain); the rest is `command`'s. */
  settingsOf?(fleet: string): Partial<Pick<EnvoyCommandOptions, 'logLevel' | 'drainTimeS'>>;
}

export interface LocalEnvoyFleetOptions {
  source: FleetSource;
  /** Folder holding one folder per Envoy (NS/NAME). */
  stateDir: string;
  binary: string;
  command: Omit<EnvoyCommandOptions, 'dir'>;
  connection: EnvoyConnection;
  /** How long an Envoy drains before it is stopped. */
  drainMs: number;
  logger: Logger;
  backoff?: BackoffPolicy;
  /** Called with the Gateway each time its dead Envoy is restarted. */
  onRestart?: (fleet: string) => void;
  /** Called with an Envoy's admin port before that Envoy starts (for the endpoint guard). */
  onAdminPort?: (port: number) => void;
}

export class LocalEnvoyFleet {
  private readonly envoys = new Map<string, SupervisedEnvoy>();
  /** Envoys draining after their Gateway went, by Gateway; a Gateway back meanwhile waits for it. */
  private readonly draining = new Map<string, Promise<void>>();
  private unsubscribe: (() => void) | undefined;
  private scheduled = false;
  private stopped = false;
  private readonly log: Logger;

  constructor(private readonly o: LocalEnvoyFleetOptions) {
    this.log = o.logger.child({ component: 'local-fleet' });
  }

  /** Starts following the fleets (and starts Envoys for those that exist already). */
  start(): void {
    this.unsubscribe = this.o.source.onChange(() => this.schedule());
    process.on('exit', this.killOnExit);
    this.log.info(
      { binary: this.o.binary, stateDir: this.o.stateDir, xdsAddress: this.o.connection.xdsAddress },
      'local fleet: one Envoy per Gateway',
    );
    this.schedule();
  }

  /** Gateways with a running (or restarting) Envoy, sorted. */
  fleets(): string[] {
    return [...this.envoys.keys()].sort();
  }

  /** The PID of a Gateway's Envoy, when one runs. */
  pid(fleet: string): number | undefined {
    return this.envoys.get(fleet)?.pid;
  }

  /** Admin ports of every managed Envoy, running or draining. */
  adminPorts(): number[] {
    const ports: number[] = [];
    for (const e of this.envoys.values()) {
      const p = e.adminPort();
      if (p !== undefined) ports.push(p);
    }
    return ports;
  }

  /** Drains every Envoy in parallel and stops them; nothing is started afterwards. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    const all = [...this.envoys].map(([fleet, e]) => e.stop(this.drainMsOf(fleet)));
    await Promise.all([...all, ...this.draining.values()]);
    this.envoys.clear();
    process.off('exit', this.killOnExit);
  }

  /**
   * When Convoy exits without stopping the fleet (an uncaught error), its Envoys, which live in
   * their own process groups, would outlive it: they get SIGTERM. Synchronous, as 'exit' needs.
   */
  private readonly killOnExit = (): void => {
    for (const e of this.envoys.values()) {
      const pid = e.pid;
      if (pid === undefined) continue;
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
  };

  /** Coalesces the cache's notifications (one per snapshot change) into one reconcile per turn. */
  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.reconcile();
    });
  }

  /** The command a Gateway's Envoy runs with: the flags' settings, overridden by its parameters'. */
  private commandOf(fleet: string): Omit<EnvoyCommandOptions, 'dir'> {
    return { ...this.o.command, ...this.o.source.settingsOf?.(fleet) };
  }

  /** How long a Gateway's Envoy drains when stopped: its parameters' drain timeout, else the flag's. */
  private drainMsOf(fleet: string): number {
    const s = this.o.source.settingsOf?.(fleet).drainTimeS;
    return s !== undefined ? s * 1000 : this.o.drainMs;
  }

  private reconcile(): void {
    if (this.stopped) return;
    const plan = planLocalEnvoys(
      this.envoys.keys(),
      desiredLocalEnvoys(this.o.source.fleets(), this.o.stateDir),
    );
    for (const fleet of plan.stop) {
      const envoy = this.envoys.get(fleet)!;
      this.envoys.delete(fleet);
      this.log.info({ gateway: fleet }, 'local fleet: Gateway removed; draining its Envoy');
      const done = envoy.stop(this.drainMsOf(fleet)).finally(() => {
        if (this.draining.get(fleet) === done) this.draining.delete(fleet);
      });
      this.draining.set(fleet, done);
    }
    // Envoys that keep running take their Gateway's current settings (supervised-envoy.ts).
    for (const [fleet, envoy] of this.envoys) envoy.configure(this.commandOf(fleet));
    for (const spec of plan.start) {
      const envoy = new SupervisedEnvoy({
        spec,
        binary: this.o.binary,
        command: this.commandOf(spec.fleet),
        prepare: async (adminPort) => {
          this.o.onAdminPort?.(adminPort);
          await writeEnvoyFiles(spec, adminPort, this.o.connection);
        },
        logger: this.o.logger,
        ...(this.o.backoff ? { backoff: this.o.backoff } : {}),
        onRestart: () => this.o.onRestart?.(spec.fleet),
      });
      this.envoys.set(spec.fleet, envoy);
      const previous = this.draining.get(spec.fleet) ?? Promise.resolve();
      void previous
        .then(() => (this.envoys.get(spec.fleet) === envoy ? envoy.start() : undefined))
        .catch((err: Error) =>
          this.log.error({ gateway: spec.fleet, err: err.message }, 'local fleet: start failed'),
        );
    }
  }
}
