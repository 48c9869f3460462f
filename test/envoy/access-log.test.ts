import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { translateFleet } from '../../src/envoy/translate';
import { accessLogs } from '../../src/envoy/translate/access-log';
import { decodeMessage, encodeMessage } from '../../src/envoy/protos';
import { parseAccessLogFlags, accessLogForFleet } from '../../src/cli/access-log-flags';
import { httpsFleet, mixedFleet } from './fixtures';

type Obj = Record<string, unknown>;

/** The access_log entries of every HCM and TCP proxy of a fleet's listeners, decoded from the wire. */
function loggers(resources: ReturnType<typeof translateFleet>): Obj[][] {
  const out: Obj[][] = [];
  for (const l of resources.listeners) {
    const decoded = decodeMessage<Obj>(
      'envoy.config.listener.v3.Listener',
      encodeMessage('envoy.config.listener.v3.Listener', l),
    );
    for (const chain of (decoded.filter_chains as Obj[]) ?? []) {
      for (const f of (chain.filters as Obj[]) ?? []) {
        const config = f.typed_config as Obj;
        if (
          String(config['@type']).endsWith('HttpConnectionManager') ||
          String(config['@type']).endsWith('TcpProxy')
        )
          out.push((config.access_log as Obj[]) ?? []);
      }
    }
  }
  return out;
}

describe('access logs', () => {
  test('JSON to stdout by default, naming listener, route, upstream and response flags', () => {
    const all = loggers(translateFleet(mixedFleet(), { bindAddress: '127.0.0.1' }));
    assert.ok(all.length >= 2);
    for (const logs of all) {
      assert.equal(logs.length, 1);
      assert.equal(logs[0].name, 'envoy.access_loggers.stdout');
    }
    const fields = (accessLogs({ format: 'json' }).http[0].typed_config as unknown as Obj).log_format as Obj;
    const json = JSON.stringify(fields);
    for (const op of [
      '%FILTER_CHAIN_NAME%',
      '%ROUTE_NAME%',
      '%UPSTREAM_CLUSTER%',
      '%UPSTREAM_HOST%',
      '%RESPONSE_FLAGS%',
    ])
      assert.ok(json.includes(op), op);
    assert.ok(!json.includes('%REQ(:PATH)%'), 'the path is logged without its query string');
    const tcp = JSON.stringify(accessLogs({ format: 'json' }).tcp[0]);
    assert.ok(tcp.includes('%REQUESTED_SERVER_NAME%') && !tcp.includes('%ROUTE_NAME%'));
  });

  test('off removes them, a path writes a file, text is one line per request', () => {
    const off = loggers(translateFleet(httpsFleet(), { accessLog: { format: 'off' } }));
    assert.ok(off.length > 0 && off.every((l) => l.length === 0));
    const file = loggers(
      translateFleet(httpsFleet(), { accessLog: { format: 'text', path: '/var/log/envoy.log' } }),
    );
    for (const [log] of file) {
      assert.equal(log.name, 'envoy.access_loggers.file');
      const config = log.typed_config as Obj;
      assert.equal(config.path, '/var/log/envoy.log');
      assert.match(
        String((config.log_format as Obj).text_format),
        /^time=%START_TIME% listener=%FILTER_CHAIN_NAME% .*\n$/,
      );
    }
  });

  test('per fleet settings: a function of the Gateway, byte-stable across calls', () => {
    const settings = parseAccessLogFlags(['text', 'default/edge=off']);
    const fleet = httpsFleet();
    const perFleet = accessLogForFleet(settings);
    const a = translateFleet(fleet, { accessLog: perFleet });
    const b = translateFleet(fleet, { accessLog: perFleet });
    assert.equal(a.listeners[0], b.listeners[0], 'memoized: the same object for the same options');
    const bytes = (r: typeof a) =>
      encodeMessage('envoy.config.listener.v3.Listener', r.listeners[0]).toString('hex');
    assert.equal(bytes(a), bytes(translateFleet(fleet, { accessLog: perFleet(fleet.fleet) })));
    assert.notEqual(bytes(a), bytes(translateFleet(fleet, { accessLog: { format: 'off' } })));
  });
});

describe('--access-log', () => {
  test('parses defaults, per-Gateway values and files', () => {
    const s = parseAccessLogFlags(['json:/var/log/a.log', 'team-a/web=text', 'team-b/api=off']);
    assert.deepEqual(s.default, { format: 'json', path: '/var/log/a.log' });
    assert.deepEqual(s.gateways.get('team-a/web'), { format: 'text' });
    const f = accessLogForFleet(s);
    assert.deepEqual(f('team-b/api'), { format: 'off' });
    assert.deepEqual(f('other/gw'), { format: 'json', path: '/var/log/a.log' });
    assert.deepEqual(parseAccessLogFlags([]).default, { format: 'json' });
  });

  test('refuses bad formats, relative files, off with a file and bad Gateway names', () => {
    for (const bad of ['xml', 'json:relative.log', 'off:/x', 'Bad_NS/x=json', 'ns=json', 'json:/a\nb'])
      assert.throws(() => parseAccessLogFlags([bad]), /--access-log/, bad);
  });
});
