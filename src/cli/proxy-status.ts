import { renderXdsDebugText } from '../xds/sync-view';
import { proxyStatusReport, renderProxyStatusReport } from '../xds/csds-view';
import { defineCommand, parseCommand } from './args';
import { formatOutput, outputOption } from './output';
import { fetchAdmin } from './status';
import { XDS_CLIENT_OPTIONS, fetchClientStatus } from './xds-client';

/**
 * `convoy proxy-status`: every connected Envoy, grouped by Gateway, and per xDS type whether it
 * runs what Convoy built (synced), is behind (stale), got nothing yet (not sent) or rejected
 * something (rejected, with Envoy's message). Reads Convoy's Client Status Discovery Service
 * (docs/operations.md §5); `--admin-address` reads the admin server's /debug/xds instead.
 */

export const proxyStatusSpec = defineCommand({
  name: 'proxy-status',
  summary:
    'show every connected Envoy by Gateway and whether each xDS type is synced, stale, not sent or rejected',
  options: {
    ...XDS_CLIENT_OPTIONS,
    gateway: { type: 'string', valueName: 'NAMESPACE/NAME', description: 'Only the Envoys of this Gateway.' },
    'admin-address': {
      type: 'string',
      valueName: 'HOST:PORT',
      description: "Read the per-stream view of Convoy's admin server (GET /debug/xds) instead of CSDS.",
    },
    output: outputOption('table'),
  },
  details: `Exit status: 0 when Convoy answered (whatever the Envoys' states), 1 when it could not be
asked (not running, refused: the operator certificate is missing or wrong), 2 for a bad flag.

Examples:
  convoy proxy-status
  convoy proxy-status --gateway default/demo -o json
  convoy proxy-status --xds-address convoy-xds.convoy-system.svc:18000 \\
      --xds-tls-cert operator/tls.crt --xds-tls-key operator/tls.key --xds-tls-ca operator/ca.crt`,
});

export async function proxyStatusCommand(argv: string[]): Promise<void> {
  const parsed = parseCommand(proxyStatusSpec, argv);
  if (!parsed) return;
  const v = parsed.values;
  if (v['admin-address'] !== undefined) {
    const res = await fetchAdmin(v['admin-address'], '/debug/xds');
    if (res.status !== 200) throw new Error(`GET /debug/xds answered ${res.status}: ${res.body.trim()}`);
    let state: unknown;
    try {
      state = JSON.parse(res.body);
    } catch {
      throw new Error('GET /debug/xds did not return JSON');
    }
    process.stdout.write(formatOutput(v.output, state, () => renderXdsDebugText(state)));
    return;
  }
  const configs = await fetchClientStatus(v, { excludeContents: true }, 'proxy-status');
  const report = proxyStatusReport(configs).filter((g) => v.gateway === undefined || g.gateway === v.gateway);
  process.stdout.write(formatOutput(v.output, report, () => renderProxyStatusReport(report)));
}
