import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GATEWAY_KIND_SCHEMAS, servedApiVersions, validateObject } from '../../src/validation';
import { parseGatewayDuration } from '../../src/validation/crds/httproute';
import type { SchemaNode } from '../../src/validation/schema';
import type { KubeObject } from '../../src/store/objects';
import { VALID_OBJECTS, gateway, httpRoute, listenerSet, tlsSecret } from './fixtures';
import { INVALID_FIXTURES, edit } from './invalid-fixtures';

const validate = (o: unknown) => validateObject(o as KubeObject);

/** True when `error` reports a problem at `path` (or inside it). */
function at(error: string, path: string): boolean {
  return error.startsWith(path) && /^[:.[]/.test(error.slice(path.length));
}

describe('valid objects', () => {
  for (const { description, object } of VALID_OBJECTS) {
    test(description, () => {
      assert.deepEqual(validate(object), []);
    });
  }
});

describe('invalid objects are refused with a message naming the field', () => {
  for (const f of INVALID_FIXTURES) {
    test(`${f.object.kind as string}: ${f.description}`, () => {
      const errors = validate(f.object);
      assert.ok(errors.length > 0, 'must be refused');
      const here = errors.filter((e) => at(e, f.expectFieldPath));
      assert.ok(here.length > 0, `no error at ${f.expectFieldPath}:\n${errors.join('\n')}`);
      const expected = f.expectMessage;
      if (expected !== undefined) {
        assert.ok(
          here.some((e) => e.includes(expected)),
          `no error at ${f.expectFieldPath} says "${expected}":\n${errors.join('\n')}`,
        );
      }
    });
  }
});

test('invalid fixtures have unique descriptions', () => {
  const seen = new Set<string>();
  for (const f of INVALID_FIXTURES) {
    const d = `${f.object.kind as string}: ${f.description}`;
    assert.ok(!seen.has(d), d);
    seen.add(d);
  }
});

test('every CEL rule of every CRD is exercised by at least one invalid fixture', () => {
  const messages = new Set<string>();
  const walk = (n: SchemaNode): void => {
    for (const r of n.rules ?? []) if (!r.transition) messages.add(r.message);
    if (n.type === 'object') Object.values(n.properties).forEach(walk);
    if (n.type === 'array') walk(n.items);
    if (n.type === 'map') walk(n.values);
  };
  for (const s of Object.values(GATEWAY_KIND_SCHEMAS)) walk(s.spec);
  const produced = INVALID_FIXTURES.flatMap((f) => validate(f.object)).join('\n');
  const missing = [...messages].filter((m) => !produced.includes(m));
  assert.deepEqual(missing, []);
  assert.ok(messages.size >= 60, `expected the CRDs' ~70 distinct rule messages, found ${messages.size}`);
});

describe('messages', () => {
  test('CEL rule on a list names the offending element and uses the CRD text', () => {
    const o = edit(gateway(), { 'spec.listeners[1].name': 'http' });
    const errors = validate(o);
    assert.ok(
      errors.includes('spec.listeners[1]: Invalid value: Listener name must be unique within the Gateway'),
      errors.join('\n'),
    );
    assert.ok(errors.includes('spec.listeners[1]: Duplicate value: {"name":"http"}'), errors.join('\n'));
  });

  test('hostname on a TCP listener', () => {
    const o = edit(gateway(), { 'spec.listeners[5].hostname': 'tcp.example.com' });
    assert.deepEqual(validate(o), [
      "spec.listeners[5]: Invalid value: hostname must not be specified for protocols ['TCP', 'UDP']",
    ]);
  });

  test('CEL rule on an object names the object', () => {
    const o = edit(httpRoute(), { 'spec.rules[0].timeouts': { request: '1s', backendRequest: '2s' } });
    assert.deepEqual(validate(o), [
      'spec.rules[0].timeouts: Invalid value: "object": backendRequest timeout cannot be longer than request timeout',
    ]);
  });

  test('schema errors', () => {
    const o = edit(listenerSet(), { 'spec.listeners[0].port': 65536, 'spec.listeners[1].tls.mode': 'Other' });
    assert.deepEqual(validate(o), [
      'spec.listeners[0].port: Invalid value: 65536: spec.listeners[0].port in body should be less than or equal to 65535',
      'spec.listeners[1].tls.mode: Unsupported value: "Other": supported values: "Terminate", "Passthrough"',
      // CEL rules still run when the schema already failed inside, as in kube-apiserver.
      'spec.listeners[1]: Invalid value: tls mode must be Terminate for protocol HTTPS',
    ]);
  });
});

describe('semantics', () => {
  test('defaults are applied before the rules, on a copy', () => {
    // TLS listener with tls {}: mode defaults to Terminate, which needs certificateRefs or options.
    const o = edit(gateway(), { 'spec.listeners[3].tls': {} });
    const before = JSON.stringify(o);
    const errors = validate(o);
    assert.ok(
      errors.some((e) => e.includes('certificateRefs or options must be specified when mode is Terminate')),
    );
    assert.equal(JSON.stringify(o), before, 'the object is not modified');
    // HTTPRoute rule without matches: the default PathPrefix "/" match satisfies ReplacePrefixMatch.
    const r = edit(httpRoute(), {
      'spec.rules': [
        {
          filters: [
            {
              type: 'URLRewrite',
              urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } },
            },
          ],
        },
      ],
    });
    assert.deepEqual(validate(r), []);
  });

  test('null fields count as absent', () => {
    const o = edit(gateway(), { 'spec.listeners[0].hostname': null, 'spec.addresses': null });
    assert.deepEqual(validate(o), []);
  });

  test('HTTPS listener without tls is accepted (the CRD rule was reverted in v1.6.0)', () => {
    const o = edit(gateway(), { 'spec.listeners': [{ name: 's', port: 443, protocol: 'HTTPS' }] });
    assert.deepEqual(validate(o), []);
  });

  test('request timeout 0s disables the backendRequest limit', () => {
    const o = edit(httpRoute(), { 'spec.rules[0].timeouts': { request: '0s', backendRequest: '10m' } });
    assert.deepEqual(validate(o), []);
  });

  test('GEP-2257 durations', () => {
    assert.equal(parseGatewayDuration('1h30m'), 5_400_000);
    assert.equal(parseGatewayDuration('2s500ms'), 2500);
    assert.equal(parseGatewayDuration('0s'), 0);
    assert.equal(parseGatewayDuration('1m1s1ms'), 61_001);
  });

  test('served apiVersions', () => {
    assert.deepEqual(servedApiVersions('TLSRoute'), ['gateway.networking.k8s.io/v1']);
    assert.deepEqual(servedApiVersions('ReferenceGrant'), [
      'gateway.networking.k8s.io/v1',
      'gateway.networking.k8s.io/v1beta1',
    ]);
    assert.deepEqual(servedApiVersions('EndpointSlice'), ['discovery.k8s.io/v1']);
    assert.deepEqual(servedApiVersions('ConfigMap'), ['v1']);
    assert.deepEqual(servedApiVersions('BackendTLSPolicy'), ['gateway.networking.k8s.io/v1']);
    assert.deepEqual(servedApiVersions('Pod'), []);
  });

  test('ConfigMaps: data and binaryData with valid keys (CA bundles, docs/gateway-api.md §25)', () => {
    const cm = (extra: object) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ca' },
      ...extra,
    });
    assert.deepEqual(validate(cm({ data: { 'ca.crt': 'PEM' }, binaryData: { b: 'AAAA' } })), []);
    assert.match(validate(cm({ data: { 'bad key': 'x' } })).join(), /valid config key/);
    assert.match(validate(cm({ data: { a: 1 } })).join(), /must be a string/);
    assert.match(validate(cm({ binaryData: { b: 'not base64!' } })).join(), /base64/);
    assert.match(validate(cm({ spec: {} })).join(), /unknown field "spec"/);
  });

  test('kinds Convoy does not read are refused, not crashed on', () => {
    assert.match(validate({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'x' } })[0], /^kind: /);
    assert.match(validate({ apiVersion: 'v1', metadata: { name: 'x' } })[0], /^kind: Required value/);
  });
});

describe('robustness: no input crashes validation', () => {
  const junk: unknown[] = [
    null,
    undefined,
    0,
    -1,
    1.5,
    '',
    'x',
    true,
    [],
    {},
    [null],
    [{}],
    { a: null },
    ['*'],
  ];

  test('garbage top-level values', () => {
    for (const j of junk) {
      const errors = validate(j);
      assert.ok(Array.isArray(errors) && errors.length > 0, JSON.stringify(j));
    }
  });

  test('every field of every valid object replaced by junk', () => {
    let variants = 0;
    for (const { object } of VALID_OBJECTS) {
      const paths: string[] = [];
      const collect = (v: unknown, path: string): void => {
        if (path) paths.push(path);
        if (Array.isArray(v)) v.forEach((x, i) => collect(x, `${path}[${i}]`));
        else if (v && typeof v === 'object') {
          for (const [k, x] of Object.entries(v)) {
            if (!k.includes('.') && !k.includes('/')) collect(x, path ? `${path}.${k}` : k);
          }
        }
      };
      collect(object, '');
      for (const p of paths) {
        for (const j of junk) {
          const errors = validate(edit(object, { [p]: j }));
          assert.ok(Array.isArray(errors), p);
          for (const e of errors) assert.equal(typeof e, 'string');
          assert.ok(
            !errors.some((e) => e.startsWith('object could not be validated')),
            `${p} = ${JSON.stringify(j)}`,
          );
          variants++;
        }
      }
    }
    assert.ok(variants > 1000);
  });
});

describe('Secret data size', () => {
  const withData = (bytes: number) =>
    edit(tlsSecret(), { 'data.blob': Buffer.alloc(bytes, 7).toString('base64') });

  test('more than 1 MiB says "Too long" as kube-apiserver does; 10 MB does not overflow the stack', () => {
    for (const bytes of [1024 * 1024 + 1, 10 * 1024 * 1024]) {
      const errors = validate(withData(bytes));
      assert.ok(
        errors.includes('data: Too long: may not be more than 1048576 bytes'),
        `${bytes} bytes: ${errors.join('; ').slice(0, 300)}`,
      );
      assert.ok(!errors.some((e) => e.startsWith('object could not be validated')), errors.join('; '));
    }
  });

  test('up to 1 MiB in total is accepted; what is not base64 is refused', () => {
    const tls = tlsSecret() as { data: Record<string, string> };
    const used = Object.values(tls.data).reduce((n, v) => n + Buffer.from(v, 'base64').length, 0);
    assert.deepEqual(validate(withData(1024 * 1024 - used)), []);
    for (const bad of ['abc', 'ab=c', 'a===', '****']) {
      const errors = validate(edit(tlsSecret(), { 'data.blob': bad }));
      assert.ok(
        errors.some((e) => e.startsWith('data[blob]: Invalid value') && e.includes('base64')),
        `${bad}: ${errors.join('; ')}`,
      );
    }
  });
});
