import * as net from 'node:net';
import type { Logger } from '../observability/logger';
import { CertificateDirectory, defaultCertsDir } from '../pki/certificate-directory';
import type { EnsureResult } from '../pki/certificate-directory';
import type { StreamLimits } from '../xds/admission';
import type { TlsFiles } from '../xds/tls-credentials';
import { formatDuration, parseDuration } from '../util/duration';

/**
 * `convoy serve`'s xDS security flags and what they turn into (docs/security.md §2): mTLS by
 * default with Convoy's own CA kept in a folder (created if missing, certificates renewed while
 * serving), mTLS with files managed elsewhere (--xds-tls-*), or plaintext only when asked for by
 * name. Also the stream limits of the ADS server.
 */

export const DEFAULT_MAX_STREAMS = 20_000;
export const DEFAULT_MAX_STREAMS_PER_PEER = 1_000;
export const DEFAULT_UNKNOWN_FLEET_TIMEOUT = '60s';

/** node:util parseArgs options of this block (merged into serve's). */
export const XDS_SECURITY_OPTIONS = {
  'insecure-plaintext-xds': { type: 'boolean', default: false },
  'xds-certs-dir': { type: 'string' },
  'xds-server-name': { type: 'string', multiple: true },
  'xds-tls-cert': { type: 'string' },
  'xds-tls-key': { type: 'string' },
  'xds-tls-ca': { type: 'string' },
  'xds-max-streams': { type: 'string', default: String(DEFAULT_MAX_STREAMS) },
  'xds-max-streams-per-peer': { type: 'string', default: String(DEFAULT_MAX_STREAMS_PER_PEER) },
  'xds-unknown-fleet-timeout': { type: 'string', default: DEFAULT_UNKNOWN_FLEET_TIMEOUT },
} as const;

export const XDS_SECURITY_USAGE = `
xDS security (mTLS by default; docs/security.md):
  --xds-certs-dir DIR              Convoy's xDS CA and certificates, created if missing; the
                                   serving certificate and every DIR/gateways/NS/NAME client
                                   certificate are renewed while serving (convoy certgen makes
                                   the same layout). Default: ${defaultCertsDir()}
                                   ($XDG_STATE_HOME/convoy/xds-pki)
  --xds-server-name NAME           Extra DNS name or IP for the serving certificate (repeatable;
                                   localhost, 127.0.0.1 and ::1 are always in it)
  --xds-tls-cert FILE              Serve with this certificate instead of --xds-certs-dir ...
  --xds-tls-key FILE               ... its key ...
  --xds-tls-ca FILE                ... and require client certificates from this CA bundle
                                   (all three files are reloaded when they change)
  --insecure-plaintext-xds         Serve xDS WITHOUT TLS: any process that reaches the xDS
                                   address can read every Gateway's TLS private keys
  --xds-max-streams N              Most open ADS streams (default ${DEFAULT_MAX_STREAMS})
  --xds-max-streams-per-peer N     Most open ADS streams per client IP address
                                   (default ${DEFAULT_MAX_STREAMS_PER_PEER})
  --xds-unknown-fleet-timeout D    Close a stream whose Gateway does not exist after D
                                   (e.g. 60s, 5m; default ${DEFAULT_UNKNOWN_FLEET_TIMEOUT})
`;

export interface XdsSecurityFlags {
  'insecure-plaintext-xds'?: boolean;
  'xds-certs-dir'?: string;
  'xds-server-name'?: string[];
  'xds-tls-cert'?: string;
  'xds-tls-key'?: string;
  'xds-tls-ca'?: string;
  'xds-max-streams'?: string;
  'xds-max-streams-per-peer'?: string;
  'xds-unknown-fleet-timeout'?: string;
}

/** What the ADS server gets, plus a stopper for the renewal timer. */
export interface XdsSecurity {
  tlsFiles: TlsFiles | undefined;
  limits: StreamLimits;
  unknownFleetTimeoutMs: number;
  /** Convoy's own CA folder when xDS uses it (not with --xds-tls-* or plaintext): it issues the client certificates of managed Envoys (local processes and Kubernetes fleets). */
  certificates?: CertificateDirectory;
  stop(): void;
}

function positiveInt(text: string | undefined, flag: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1)
    throw new Error(`--${flag}: expected a positive integer, got ${JSON.stringify(text)}`);
  return n;
}

/** The host of a listen address when it names one interface (not 0.0.0.0 or ::). */
function specificHost(xdsAddress: string): string | undefined {
  const m = /^\[([^\]]+)\]:\d+$/.exec(xdsAddress) ?? /^([^:]+):\d+$/.exec(xdsAddress);
  const host = m?.[1];
  if (!host || host === '0.0.0.0' || host === '::') return undefined;
  return net.isIP(host) !== 0 || /^[a-z0-9.-]+$/i.test(host) ? host : undefined;
}

/** Longest wait between two renewal checks (a clock jump or a file edited by hand is seen). */
const MAX_RENEWAL_CHECK_MS = 3_600_000;

/**
 * Resolves the flags: checks combinations, prepares the CA folder (creating the CA and the
 * serving certificate when missing) and starts the renewal timer. Throws on bad flags or an
 * unusable folder, which serve reports before opening any port.
 */
export async function setUpXdsSecurity(
  v: XdsSecurityFlags,
  ctx: {
    logger: Logger;
    xdsAddress: string;
    /** Runs before the folder's CA is used: Kubernetes mode replaces it with the shared CA Secret's. */
    shareCa?: (certs: CertificateDirectory) => Promise<void>;
  },
): Promise<XdsSecurity> {
  const limits: StreamLimits = {
    maxStreams: positiveInt(v['xds-max-streams'] ?? String(DEFAULT_MAX_STREAMS), 'xds-max-streams'),
    maxStreamsPerPeer: positiveInt(
      v['xds-max-streams-per-peer'] ?? String(DEFAULT_MAX_STREAMS_PER_PEER),
      'xds-max-streams-per-peer',
    ),
  };
  const unknownFleetTimeoutMs = parseDuration(
    v['xds-unknown-fleet-timeout'] ?? DEFAULT_UNKNOWN_FLEET_TIMEOUT,
    '--xds-unknown-fleet-timeout',
  );
  const files = [v['xds-tls-cert'], v['xds-tls-key'], v['xds-tls-ca']];
  const given = files.filter((f) => f !== undefined).length;
  const none = { limits, unknownFleetTimeoutMs, stop: () => undefined };

  if (v['insecure-plaintext-xds']) {
    if (given > 0 || v['xds-certs-dir'] !== undefined || (v['xds-server-name']?.length ?? 0) > 0) {
      throw new Error('--insecure-plaintext-xds excludes --xds-tls-*, --xds-certs-dir and --xds-server-name');
    }
    ctx.logger.warn(
      { xdsAddress: ctx.xdsAddress, flag: '--insecure-plaintext-xds' },
      'xds: INSECURE: serving xDS in PLAINTEXT without client authentication; any process that can reach ' +
        "the xDS address receives every Gateway's TLS private keys. Remove --insecure-plaintext-xds to use mTLS.",
    );
    return { tlsFiles: undefined, ...none };
  }
  if (given > 0) {
    if (given !== 3) throw new Error('--xds-tls-cert, --xds-tls-key and --xds-tls-ca must be given together');
    if (v['xds-certs-dir'] !== undefined) throw new Error('--xds-certs-dir excludes --xds-tls-*');
    const [certFile, keyFile, caFile] = files as [string, string, string];
    return { tlsFiles: { certFile, keyFile, caFile }, ...none };
  }

  const dir = v['xds-certs-dir'] ?? defaultCertsDir();
  const certs = new CertificateDirectory(dir);
  const serverNames = [...(v['xds-server-name'] ?? [])];
  const host = specificHost(ctx.xdsAddress);
  if (host) serverNames.push(host);
  try {
    if (ctx.shareCa) await ctx.shareCa(certs);
    const { created } = await certs.ensureCa({ create: true });
    if (created)
      ctx.logger.info({ caFile: certs.caCertFile }, 'xds: created a new CA for Envoy client certificates');
    logEnsure(ctx.logger, 'server', await certs.ensureServer(serverNames));
  } catch (err) {
    throw new Error(
      `xDS certificates in ${certs.root}: ${(err as Error).message}. Choose a writable folder with --xds-certs-dir, ` +
        'give files with --xds-tls-cert/--xds-tls-key/--xds-tls-ca, or (unsafe) --insecure-plaintext-xds',
      { cause: err },
    );
  }

  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const renew = async (): Promise<void> => {
    let next = Date.now() + MAX_RENEWAL_CHECK_MS;
    for (const r of await certs.renewDue()) {
      if (r.error) {
        ctx.logger.error({ subject: r.subject, err: r.error.message }, 'xds: renewing a certificate failed');
        next = Math.min(next, Date.now() + 60_000);
      } else if (r.result) {
        logEnsure(ctx.logger, r.subject, r.result);
        next = Math.min(next, r.result.renewAt.getTime());
      }
    }
    if (stopped) return;
    const wait = Math.max(1_000, next - Date.now());
    ctx.logger.debug({ in: formatDuration(Math.round(wait)) }, 'xds: next certificate renewal check');
    timer = setTimeout(
      () => void renew().catch((err: Error) => ctx.logger.error({ err: err.message }, 'xds: renewal failed')),
      wait,
    );
    timer.unref();
  };
  await renew();
  ctx.logger.info(
    { certsDir: certs.root, serverNames: ['localhost', '127.0.0.1', '::1', ...serverNames] },
    "xds: mTLS with Convoy's CA; clients need a certificate naming their Gateway (convoy bootstrap --certs-dir)",
  );
  return {
    tlsFiles: certs.serverFiles(),
    ...none,
    certificates: certs,
    stop: () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

function logEnsure(logger: Logger, subject: string, r: EnsureResult): void {
  if (r.action === 'current') return;
  logger.info(
    {
      subject,
      reason: r.reason,
      serial: r.info.serialNumber,
      notAfter: r.info.notAfter.toISOString(),
      dir: r.files.dir,
    },
    `xds: ${r.action} a certificate`,
  );
}
