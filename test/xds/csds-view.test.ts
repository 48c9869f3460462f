import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeMessage } from '../../src/envoy/protos';
import { TypeUrl } from '../../src/envoy/resources';
import { parseClientStatusRequest, stringMatches } from '../../src/xds/csds';
import {
  configDump,
  proxyStatusReport,
  renderConfigDump,
  renderProxyStatusReport,
  typeUrlOf,
} from '../../src/xds/csds-view';
import type { ClientConfigJson } from '../../src/xds/csds-view';

const g = (type_url: string, name: string, config_status: string, client_status: string, extra = {}) => ({
  type_url,
  name,
  version_info: 'v1',
  config_status,
  client_status,
  ...extra,
});

const CONFIGS: ClientConfigJson[] = [
  {
    node: { id: 'b', cluster: 'team/web', user_agent_name: 'envoy' },
    generic_xds_configs: [
      g(TypeUrl.Listener, 'http-80', 'SYNCED', 'ACKED'),
      g(TypeUrl.Listener, 'https-443', 'ERROR', 'NACKED', {
        version_info: '',
        error_state: {
          details: 'cannot bind\n  twice',
          version_info: 'v2',
          last_update_attempt: { seconds: '10', nanos: 5e6 },
        },
      }),
      g(TypeUrl.Cluster, 'c', 'STALE', 'ACKED'),
    ],
  },
  {
    node: { id: 'a', cluster: 'team/web' },
    generic_xds_configs: [g(TypeUrl.Cluster, 'c', 'NOT_SENT', 'REQUESTED')],
  },
  { node: { id: 'z', cluster: 'infra/edge' }, generic_xds_configs: [] },
];

test('proxy-status groups Envoys by Gateway, sums types up and lists rejections', () => {
  const report = proxyStatusReport(CONFIGS);
  assert.deepEqual(
    report.map((r) => [r.gateway, r.envoys.map((e) => e.node)]),
    [
      ['infra/edge', ['z']],
      ['team/web', ['a', 'b']],
    ],
  );
  const b = report[1].envoys[1];
  assert.deepEqual(b.types, {
    CDS: { state: 'stale', resources: 1, notSynced: 1 },
    LDS: { state: 'rejected', resources: 2, notSynced: 1 },
  });
  assert.deepEqual(b.rejected, [
    {
      type: 'LDS',
      name: 'https-443',
      version: 'v2',
      message: 'cannot bind\n  twice',
      since: '1970-01-01T00:00:10.005Z',
    },
  ]);
  assert.equal(report[1].envoys[0].types.CDS.state, 'not sent');
  const text = renderProxyStatusReport(report);
  assert.match(text, /^Gateway infra\/edge: 1 Envoy\n {2}NODE {3}AGENT\n {2}z {6}-\n/);
  assert.match(text, /Gateway team\/web: 2 Envoys\n/);
  assert.match(text, /\n {2}b +envoy +stale \(1 of 1\) +rejected \(1 of 2\)\n/);
  assert.match(text, /\nRejected:\n {2}team\/web b LDS https-443 \(version v2\): cannot bind twice\n$/);
  assert.equal(renderProxyStatusReport([]), 'No Envoy is connected.\n');
});

test('config-dump filters by type, redacts secrets and renders a table', () => {
  const secret = {
    node: { id: 'n' },
    generic_xds_configs: [
      g(TypeUrl.Secret, 's', 'SYNCED', 'ACKED', {
        xds_config: {
          '@type': TypeUrl.Secret,
          name: 's',
          tls_certificate: { private_key: { inline_string: 'KEY' } },
        },
      }),
      g(TypeUrl.Cluster, 'c', 'SYNCED', 'ACKED'),
    ],
  };
  const dump = configDump(secret, TypeUrl.Secret);
  assert.deepEqual(dump, [
    {
      type: 'SDS',
      name: 's',
      version: 'v1',
      clientStatus: 'ACKED',
      configStatus: 'SYNCED',
      resource: {
        '@type': TypeUrl.Secret,
        name: 's',
        tls_certificate: { private_key: { inline_string: '[redacted]' } },
      },
    },
  ]);
  assert.equal(configDump(secret).length, 2);
  assert.match(
    renderConfigDump('n', configDump(secret)),
    /^Envoy n\nTYPE {3}NAME {3}VERSION {3}CLIENT {3}CONVOY {3}ERROR\nSDS {4}s {6}v1 {8}ACKED {4}SYNCED\n/,
  );
});

test('--type names', () => {
  assert.equal(typeUrlOf('LDS'), TypeUrl.Listener);
  assert.equal(typeUrlOf('clusters'), TypeUrl.Cluster);
  assert.equal(typeUrlOf(TypeUrl.Secret), TypeUrl.Secret);
  assert.equal(typeUrlOf('vhds'), undefined);
});

test('node matchers: exact, prefix, suffix, contains, case; regexes and metadata are refused', () => {
  assert.ok(stringMatches({ exact: 'a' }, 'a') && !stringMatches({ exact: 'a' }, 'ab'));
  assert.ok(stringMatches({ prefix: 'env' }, 'envoy-1') && stringMatches({ suffix: '-1' }, 'envoy-1'));
  assert.ok(stringMatches({ contains: 'VOY', ignore_case: true }, 'envoy-1'));
  assert.ok(!stringMatches({}, 'x'), 'a matcher without a pattern matches nothing');
  const req = (m: object) => encodeMessage('envoy.service.status.v3.ClientStatusRequest', m);
  const parsed = parseClientStatusRequest(
    req({ node_matchers: [{ node_id: { prefix: 'e' } }], exclude_resource_contents: true }),
  );
  assert.equal(parsed.excludeContents, true);
  assert.deepEqual(
    parsed.nodeIds.map((m) => m.prefix),
    ['e'],
  );
  assert.throws(
    () => parseClientStatusRequest(req({ node_matchers: [{ node_id: { safe_regex: { regex: '.*' } } }] })),
    /safe_regex/,
  );
  assert.throws(
    () =>
      parseClientStatusRequest(
        req({ node_matchers: [{ node_id: { exact: 'a' }, node_metadatas: [{ path: [{ key: 'k' }] }] }] }),
      ),
    /node_metadatas/,
  );
});
