/**
 * Returns the `convoy serve` arguments a bench tool gives a file-mode Convoy on the world in
 * `worldDir` (`files` files written there) whose simulated Envoys authenticate with certificates
 * from `certsDir`, so the probes that start such a Convoy (rss-probe, scrape-cost) run it alike.
 * The file limit is raised above the world's size, Envoy listeners bind loopback, and a fleet's
 * first snapshot is waited for 30 min: simulated Envoys connect as soon as the port listens and do
 * not reconnect, and a large cold start outlasts the default wait.
 */
export function filesConvoyArgs(worldDir: string, files: number, certsDir: string): string[] {
  return [
    '--from-dir',
    worldDir,
    '--from-dir-max-files',
    String(Math.max(10_000, 2 * files)),
    '--envoy-bind-address',
    '127.0.0.1',
    '--xds-certs-dir',
    certsDir,
    '--xds-unknown-fleet-timeout',
    '30m',
  ];
}
