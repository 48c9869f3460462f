/**
 * What a user of the real Envoy sees, probed from outside over loopback only: the certificate
 * served for an SNI, the answer to a request that a redirect rule answers without any backend,
 * and the endpoints Envoy loaded for a cluster (its admin config dump). Nothing here dials the
 * world's endpoint addresses (documentation ranges): redirects are answered by Envoy itself.
 */
import * as https from 'node:https';
import { loopbackRequest } from '../../e2e/harness/util';
import { servedSerial } from '../envoy-real';
import { nowMs, sleep } from '../common';

/** Upper-case hexadecimal without leading zeros, the form both sides of a comparison take. */
export function normalizeSerial(s: string | undefined): string | undefined {
  return s?.toUpperCase().replace(/^0+/, '');
}

/** Resolves with the time `check()` first returned true, polling every `stepMs`; rejects after `timeoutMs`. */
export async function whenTrue(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs: number,
  stepMs: number,
): Promise<number> {
  const deadline = nowMs() + timeoutMs;
  for (;;) {
    if (await check()) return nowMs();
    if (nowMs() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(stepMs);
  }
}

/**
 * Whether Envoy no longer presents the certificate with `serial` for SNI `host` (the handshake
 * fails, or another certificate answers).
 */
export async function stoppedServing(port: number, host: string, serial: string): Promise<boolean> {
  return normalizeSerial(await servedSerial(port, host, 2000)) !== normalizeSerial(serial);
}

/**
 * Whether Envoy's loaded RouteConfiguration `name` matches the exact path `path` (admin config
 * dump of the dynamic route configs, filtered to that name; loopback admin only), or undefined
 * when the dump does not show that configuration.
 */
export async function hasRouteMatch(
  adminPort: number,
  name: string,
  path: string,
): Promise<boolean | undefined> {
  const q = `/config_dump?resource=dynamic_route_configs&name_regex=${encodeURIComponent(`^${regexQuote(name)}$`)}`;
  const r = await loopbackRequest(adminPort, q);
  if (r.status !== 200 || !r.body.includes(`"${name}"`)) return undefined;
  return r.body.includes(`"${path}"`);
}

/** Whether Envoy presents the certificate with `serial` for SNI `host` on 127.0.0.1:`port`. */
export async function servesSerial(port: number, host: string, serial: string): Promise<boolean> {
  return normalizeSerial(await servedSerial(port, host, 2000)) === normalizeSerial(serial);
}

/**
 * Whether an HTTPS request for `host` + `path` (SNI and Host) is answered with `status` and a
 * Location containing `locationPart`. A fresh connection each time.
 */
export function answersRedirect(
  port: number,
  host: string,
  path: string,
  locationPart: string,
): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path,
        servername: host,
        headers: { host },
        rejectUnauthorized: false,
        agent: false,
        timeout: 2000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 302 && String(res.headers.location ?? '').includes(locationPart));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Escapes a string for an RE2 regular expression (Envoy's name_regex). */
export function regexQuote(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Whether Envoy's loaded endpoints of `cluster` include `address` (admin config dump of the
 * dynamic endpoint configs, filtered to that cluster; loopback admin only).
 */
export async function hasEndpoint(adminPort: number, cluster: string, address: string): Promise<boolean> {
  const q = `/config_dump?include_eds&resource=dynamic_endpoint_configs&name_regex=${encodeURIComponent(
    `^${regexQuote(cluster)}$`,
  )}`;
  const r = await loopbackRequest(adminPort, q);
  return r.status === 200 && r.body.includes(`"${address}"`);
}
