import type { FleetModel } from '../../model/fleet';
import type { EnvoyCommandOptions } from './envoy-command';
import type { FleetSource } from './local-fleet';

/**
 * The local fleet's source of Gateways (docs/operations.md §14): the fleet models the controller
 * publishes after each build (Controller's onFleets), so a Gateway has an Envoy exactly while it
 * has a model (an accepted one, or the last good one it holds), with the Envoy settings its
 * EnvoyFleet parameters give. Listeners are told only when the Gateways or their settings change.
 */

/** What a Gateway's parameters set for its local Envoy process; unset fields are the flags'. */
export type LocalEnvoySettings = Partial<Pick<EnvoyCommandOptions, 'logLevel' | 'drainTimeS'>>;

export class FleetModelSource implements FleetSource {
  private keys: string[] = [];
  private settings = new Map<string, LocalEnvoySettings>();
  private signature = '';
  private readonly listeners = new Set<() => void>();

  /** Takes the models of the latest build; notifies the listeners when Gateways or settings changed. */
  update(models: readonly FleetModel[]): void {
    const settings = new Map<string, LocalEnvoySettings>();
    for (const m of models) {
      const local = m.managed?.local;
      if (!local) continue;
      settings.set(m.fleet, {
        ...(local.logLevel ? { logLevel: local.logLevel } : {}),
        ...(local.drainTimeoutSeconds !== undefined ? { drainTimeS: local.drainTimeoutSeconds } : {}),
      });
    }
    const keys = models.map((m) => m.fleet).sort();
    const signature = JSON.stringify([keys, [...settings].sort(([a], [b]) => (a < b ? -1 : 1))]);
    if (signature === this.signature) return;
    this.signature = signature;
    this.keys = keys;
    this.settings = settings;
    for (const l of this.listeners) l();
  }

  fleets(): string[] {
    return this.keys;
  }

  /** The Envoy settings of a Gateway's parameters (empty: the flags' for everything). */
  settingsOf(fleet: string): LocalEnvoySettings {
    return this.settings.get(fleet) ?? {};
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
