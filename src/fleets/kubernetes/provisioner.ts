/**
 * Provisions managed fleets in Kubernetes (docs/architecture.md §13): after every build it renders
 * the objects of each managed fleet and converges the cluster on them with server-side apply
 * (field manager `convoy`), deletes the objects of fleets that are gone, and restores an owned
 * object someone deleted or edited (its watch sees the change). Only the leader writes; a standby
 * keeps the latest fleets so it converges at once when it takes over.
 */
import { createHash } from 'node:crypto';
import type { KubeClient } from '../../kubernetes/client';
import { statusCodeOf } from '../../kubernetes/client';
import type { Logger } from '../../observability/logger';
import type { FleetModel } from '../../model/fleet';
import type { ManagedFleetModel } from '../../model/managed-fleet';
import { fleetObjectName } from '../../model/managed-fleet';
import { parseFleetKey } from '../../pki/gateway-identity';
import { FIELD_MANAGER } from './labels';
import { OWNED_KINDS, OwnedKindWatch, ownedKey, ownedKind, ownedObjectPath } from './owned-kinds';
import { collectionPath } from '../../kubernetes/resources';
import type { FleetCertificate, RenderSettings, RenderedObject } from './render';
import { renderFleet } from './render';

/** Issues (or returns the current) xDS client certificate of a fleet; undefined = plaintext xDS. */
export type FleetCertificateSource = (fleet: string) => Promise<FleetCertificate | undefined>;

export interface KubernetesFleetProvisionerOptions {
  client: KubeClient;
  logger: Logger;
  settings: RenderSettings;
  certificates: FleetCertificateSource;
  /** Re-check everything this often (certificate renewal, missed events). Default 5 minutes. */
  resyncMs?: number;
  /** Quiet period before converging after a change. Default 100 ms. */
  debounceMs?: number;
}

interface Applied {
  hash: string;
  resourceVersion: string;
}

type ManagedModel = FleetModel & { managed: ManagedFleetModel };

export class KubernetesFleetProvisioner {
  private readonly log: Logger;
  private readonly watches: OwnedKindWatch[];
  private fleets: ManagedModel[] = [];
  /** `namespace/objectName` of fleets whose objects are neither applied nor pruned. */
  private untouched = new Set<string>();
  private leader = false;
  /**
   * Whether a build has handed over its fleets (update). Until then nothing is converged: with no
   * fleets known, a pass would prune every owned object, and a restarted leader whose first build
   * is slower than the debounce deleted a serving fleet that way (found by CI under load).
   */
  private modelsReceived = false;
  private readonly applied = new Map<string, Applied>();
  private timer?: NodeJS.Timeout;
  private resync?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;
  /** Counts completed convergence passes (for logs and tests). */
  passes = 0;

  constructor(private readonly o: KubernetesFleetProvisionerOptions) {
    this.log = o.logger.child({ component: 'fleet-provisioner' });
    this.watches = OWNED_KINDS.map((k) => new OwnedKindWatch(o.client, k, this.log, () => this.schedule()));
  }

  /** Starts the owned-object watches and the periodic resync. */
  start(): void {
    for (const w of this.watches) w.start();
    this.resync = setInterval(() => this.schedule(true), this.o.resyncMs ?? 300_000);
    this.resync.unref();
  }

  /**
   * Takes the fleets of the latest build (all of them; unmanaged ones are ignored) and the Gateways
   * (`namespace/name`) whose objects are left alone: not accepted with nothing held after a
   * restart (docs/architecture.md §13), their objects may still serve the last good configuration.
   */
  update(fleets: readonly FleetModel[], untouched: readonly string[] = []): void {
    this.modelsReceived = true;
    this.fleets = fleets.filter((f): f is ManagedModel => f.managed !== undefined);
    this.untouched = new Set(
      untouched.flatMap((fleet) => {
        const ref = parseFleetKey(fleet);
        return ref ? [`${ref.namespace}/${fleetObjectName(ref.name)}`] : [];
      }),
    );
    this.schedule();
  }

  /** Switches writing on (leader) or off; a new leader converges everything at once. */
  setLeader(leader: boolean): void {
    this.leader = leader;
    if (leader) this.schedule(true);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.resync) clearInterval(this.resync);
    await this.running;
    await Promise.all(this.watches.map((w) => w.stop()));
  }

  private schedule(forget = false): void {
    if (forget) this.applied.clear();
    if (!this.leader || this.stopped || !this.modelsReceived) return;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.running) {
        this.again = true;
        return;
      }
      this.running = this.converge().finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.schedule();
        }
      });
    }, this.o.debounceMs ?? 100);
  }

  /** One pass: apply what differs from what the cluster holds, then delete what no fleet wants. */
  private async converge(): Promise<void> {
    const wanted = new Set<string>();
    let failed = false;
    for (const fleet of this.fleets) {
      if (!this.leader || this.stopped) return;
      let objects: RenderedObject[];
      try {
        objects = renderFleet(fleet, this.o.settings, await this.o.certificates(fleet.fleet));
      } catch (err) {
        this.log.error({ err, fleet: fleet.fleet }, 'cannot render the fleet');
        failed = true;
        continue;
      }
      for (const obj of objects) {
        const key = ownedKey(obj.kind, obj.metadata.namespace, obj.metadata.name);
        wanted.add(key);
        if (!(await this.applyIfChanged(key, obj))) failed = true;
      }
    }
    if (!failed && this.watches.every((w) => w.synced)) await this.prune(wanted);
    this.passes++;
    if (failed) setTimeout(() => this.schedule(), 5_000).unref();
  }

  /** Applies one object unless the cluster still holds exactly what was last applied. */
  private async applyIfChanged(key: string, obj: RenderedObject): Promise<boolean> {
    const hash = createHash('sha256').update(JSON.stringify(obj)).digest('base64url');
    const last = this.applied.get(key);
    const observed = this.watchOf(obj.kind)?.objects.get(key);
    if (last && last.hash === hash && observed === last.resourceVersion) return true;
    try {
      const res = await this.o.client.request<{ metadata?: { resourceVersion?: string } }>(
        'PATCH',
        ownedObjectPath(obj.kind, obj.metadata.namespace, obj.metadata.name),
        {
          query: { fieldManager: FIELD_MANAGER, force: true },
          body: obj,
          contentType: 'application/apply-patch+yaml',
        },
      );
      this.applied.set(key, { hash, resourceVersion: res?.metadata?.resourceVersion ?? '' });
      if (!last || last.hash !== hash) this.log.info({ object: key }, 'applied managed fleet object');
      return true;
    } catch (err) {
      this.applied.delete(key);
      if (statusCodeOf(err) === 422 && (await this.replaceForClusterIP(obj)))
        return this.applyIfChanged(key, obj);
      this.log.warn({ err, object: key }, 'server-side apply failed');
      return false;
    }
  }

  /**
   * Deletes a Service whose cluster IP differs from the one spec.addresses now requests, so the
   * next apply creates it with that IP: the field is immutable (docs/operations.md §22). Returns
   * whether it deleted one; an apply refused for another reason (say an IP outside the cluster's
   * service range) deletes nothing and is reported by the caller.
   */
  private async replaceForClusterIP(obj: RenderedObject): Promise<boolean> {
    const wanted = obj.kind === 'Service' ? (obj.spec as { clusterIP?: string }).clusterIP : undefined;
    if (!wanted) return false;
    const path = ownedObjectPath('Service', obj.metadata.namespace, obj.metadata.name);
    try {
      const current = await this.o.client.request<{
        spec?: { clusterIP?: string };
        metadata?: { uid?: string };
      }>('GET', path);
      const held = current?.spec?.clusterIP;
      if (!held || held === wanted) return false;
      // A dry-run create of the same Service under a generated name asks the API server whether
      // the IP can be allocated; one it refuses (outside the service range, taken) keeps the
      // Service as it is rather than deleting it for an address it cannot have.
      const { name: _name, ...probeMeta } = obj.metadata;
      try {
        await this.o.client.request('POST', collectionPath(ownedKind('Service'), obj.metadata.namespace), {
          query: { dryRun: 'All', fieldManager: FIELD_MANAGER },
          body: { ...obj, metadata: { ...probeMeta, generateName: `${obj.metadata.name}-` } },
        });
      } catch (err) {
        this.log.warn(
          { err, object: path, requested: wanted },
          'the requested cluster IP cannot be allocated; the Service keeps its address',
        );
        return false;
      }
      await this.o.client.request('DELETE', path, {
        body: {
          kind: 'DeleteOptions',
          apiVersion: 'v1',
          preconditions: { uid: current?.metadata?.uid },
        },
      });
      this.log.info(
        { object: path, from: held, to: wanted },
        'recreating the Service for its requested cluster IP',
      );
      return true;
    } catch (err) {
      if (statusCodeOf(err) !== 404) this.log.warn({ err, object: path }, 'cannot replace the Service');
      return false;
    }
  }

  /**
   * Deletes owned objects no managed fleet wants (a Gateway gone or no longer managed), except
   * those of untouched fleets (a Gateway not accepted that this process has nothing to hold for).
   */
  private async prune(wanted: Set<string>): Promise<void> {
    for (const w of this.watches) {
      for (const key of [...w.objects.keys()]) {
        if (wanted.has(key) || !this.leader) continue;
        const [kind, namespace, name] = key.split('/');
        if (this.untouched.has(`${namespace}/${name}`)) continue;
        try {
          await this.o.client.request('DELETE', ownedObjectPath(kind, namespace, name), {
            body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' },
          });
          this.log.info({ object: key }, 'deleted managed fleet object');
        } catch (err) {
          if (statusCodeOf(err) !== 404) this.log.warn({ err, object: key }, 'delete failed');
        }
        this.applied.delete(key);
      }
    }
  }

  private watchOf(kind: string): OwnedKindWatch | undefined {
    return this.watches.find((_, i) => OWNED_KINDS[i].kind === kind);
  }
}
