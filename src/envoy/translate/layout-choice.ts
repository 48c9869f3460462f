import type { PortModel } from '../../model/fleet';

/**
 * How Convoy lays out a TLS port's hostnames (docs/xds.md §16): `chains` puts one filter chain per
 * Gateway API listener in the port's Listener; `sni-dispatch` gives each an internal listener and a
 * cluster of its own (sni-dispatch.ts); `auto` picks one of the two per port by its size.
 */
export type ListenerLayout = 'chains' | 'sni-dispatch' | 'auto';

/** The layout one port is actually translated with. */
export type PortLayout = 'chains' | 'sni-dispatch';

/**
 * The default `auto` threshold: a port with this many TLS filter chains or more is dispatched by
 * SNI. docs/xds.md §16 argues the figure: about where the chains layout stops meeting the 250 ms
 * "change → Envoy serving" target.
 */
export const DEFAULT_LAYOUT_THRESHOLD = 250;

/**
 * Returns the layout `auto` gives a port with `tlsChains` TLS filter chains: SNI dispatch from
 * `threshold` chains on, chains below.
 *
 * A pure threshold, without hysteresis, on purpose: a band (switch up at T, down at 0.8 T) needs to
 * remember which side a port came from, so the same objects would give different resources after
 * a restart, on another replica, or in another order of events, breaking "same objects,
 * byte-identical resources" (docs/architecture.md §6). Flapping needs the chain count itself to
 * cross T back and forth, i.e. a person or tool adding and removing hostnames at the threshold;
 * each crossing costs what one layout switch costs (docs/xds.md §16).
 */
export function layoutForSize(tlsChains: number, threshold: number): PortLayout {
  return tlsChains >= threshold ? 'sni-dispatch' : 'chains';
}

/**
 * Returns the layout a port is translated with under the configured layout: `chains` and
 * `sni-dispatch` as named, `auto` by the port's number of TLS filter chains (layoutForSize).
 * Whether the port can be dispatched at all (no hostname-less listener, not L4) is
 * sni-dispatch.ts's decision, taken after this one.
 */
export function portLayout(
  port: PortModel,
  layout: ListenerLayout | undefined,
  threshold: number = DEFAULT_LAYOUT_THRESHOLD,
): PortLayout {
  if (layout === 'auto') return port.l4 ? 'chains' : layoutForSize(port.filterChains.length, threshold);
  return layout === 'sni-dispatch' ? 'sni-dispatch' : 'chains';
}
