/**
 * Compares the hand-written schemas in src/validation/crds/ with the real v1.6.1 standard
 * CRDs, node by node: properties, types, required, enums, lengths, patterns, ranges, item
 * counts, list types, defaults, and the multiset of CEL rule messages. Skipped (with a note) when
 * the CRDs are not available locally; set CONVOY_CRD_DIR, or run
 * `e2e/cluster/build-binaries.sh crds`, or `go mod download sigs.k8s.io/gateway-api@v1.6.1`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { GATEWAY_KIND_SCHEMAS } from '../../src/validation';
import type { SchemaNode } from '../../src/validation/schema';
import { XLISTENERSET_CRD_RELEASE, xListenerSetSpec } from '../../src/validation/crds/xlistenerset';

const GATEWAY_API_VERSION = 'v1.6.1';

function findCrdDir(): string | undefined {
  const candidates: string[] = [];
  if (process.env.CONVOY_CRD_DIR) candidates.push(process.env.CONVOY_CRD_DIR);
  const cacheRoot = process.env.CONVOY_CACHE ?? join(homedir(), '.cache', 'convoy');
  if (existsSync(cacheRoot)) {
    for (const d of readdirSync(cacheRoot)) {
      const crds = join(cacheRoot, d, 'crds');
      if (existsSync(join(crds, `.complete-${GATEWAY_API_VERSION}`))) candidates.push(crds);
    }
  }
  try {
    const modcache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8', timeout: 10_000 }).trim();
    if (modcache) {
      candidates.push(join(modcache, `sigs.k8s.io/gateway-api@${GATEWAY_API_VERSION}/config/crd/standard`));
    }
  } catch {
    // no Go toolchain: fine
  }
  return candidates.find((d) => existsSync(join(d, 'gateway.networking.k8s.io_gateways.yaml')));
}

type CrdSchema = Record<string, unknown> & {
  type?: string;
  properties?: Record<string, CrdSchema>;
  items?: CrdSchema;
  additionalProperties?: CrdSchema | boolean;
  required?: string[];
  'x-kubernetes-validations'?: { message?: string; rule: string }[];
};

function compare(crd: CrdSchema, mine: SchemaNode, path: string, diffs: string[]): void {
  const isMap = crd.type === 'object' && typeof crd.additionalProperties === 'object';
  const crdType = isMap ? 'map' : crd.type;
  if (crdType !== mine.type) {
    diffs.push(`${path}: type ${crdType} vs ${mine.type}`);
    return;
  }
  const m = mine as unknown as Record<string, unknown>;
  const scalar = (crdKey: string, myKey = crdKey) => {
    const a = crd[crdKey];
    const b = m[myKey];
    if (JSON.stringify(a) !== JSON.stringify(b)) {
      diffs.push(`${path}: ${crdKey} ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    }
  };
  for (const k of ['minLength', 'maxLength', 'pattern', 'enum', 'minimum', 'maximum', 'default']) scalar(k);
  if (mine.type === 'integer') scalar('format');
  if (mine.type === 'array') {
    scalar('minItems');
    scalar('maxItems');
    scalar('x-kubernetes-list-type', 'listType');
    scalar('x-kubernetes-list-map-keys', 'listMapKeys');
  }
  if (mine.type === 'map') scalar('maxProperties');

  const crdRules = (crd['x-kubernetes-validations'] ?? []).map((r) => r.message ?? r.rule).sort();
  const myRules = (mine.rules ?? [])
    .filter((r) => !r.structural)
    .map((r) => r.message)
    .sort();
  if (JSON.stringify(crdRules) !== JSON.stringify(myRules)) {
    diffs.push(`${path}: CEL rules\n  crd:  ${JSON.stringify(crdRules)}\n  mine: ${JSON.stringify(myRules)}`);
  }
  const crdStructural = ['oneOf', 'anyOf', 'allOf', 'not'].filter((k) => crd[k] !== undefined);
  const myStructural = (mine.rules ?? []).filter((r) => r.structural);
  if (crdStructural.length !== myStructural.length) {
    diffs.push(
      `${path}: ${crdStructural.join(',') || 'no'} structural constraints vs ${myStructural.length}`,
    );
  }

  if (mine.type === 'object') {
    scalar('required');
    const crdProps = crd.properties ?? {};
    for (const k of new Set([...Object.keys(crdProps), ...Object.keys(mine.properties)])) {
      if (!crdProps[k]) {
        if (mine.properties[k]?.channel !== 'experimental') diffs.push(`${path}.${k}: only in mine`);
        else experimentalFields.push({ path: `${path}.${k}`, node: mine.properties[k] });
      } else if (mine.properties[k]?.channel === 'experimental') {
        diffs.push(`${path}.${k}: marked experimental but in the standard CRD`);
      } else if (!mine.properties[k]) diffs.push(`${path}.${k}: missing in mine`);
      else compare(crdProps[k], mine.properties[k], `${path}.${k}`, diffs);
    }
  } else if (mine.type === 'map') {
    compare(crd.additionalProperties as CrdSchema, mine.values, `${path}{}`, diffs);
  } else if (mine.type === 'array') {
    if (!crd.items) diffs.push(`${path}: CRD has no items`);
    else compare(crd.items, mine.items, `${path}[]`, diffs);
  }
}

const crdDir = findCrdDir();

/** Experimental-channel fields the comparison with the standard CRDs met (checked separately). */
const experimentalFields: { path: string; node: SchemaNode }[] = [];

/** Finds the v1.6.1 experimental CRDs in the Go module cache; undefined when absent. */
function findExperimentalCrdDir(): string | undefined {
  try {
    const modcache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8', timeout: 10_000 }).trim();
    const dir = join(modcache, `sigs.k8s.io/gateway-api@${GATEWAY_API_VERSION}/config/crd/experimental`);
    return existsSync(join(dir, 'gateway.networking.k8s.io_httproutes.yaml')) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** Returns the CRD node at a path as compare() writes it (`Kind(v).spec.a[].b`). */
function crdNodeAt(root: CrdSchema, path: string): CrdSchema | undefined {
  let node: CrdSchema | undefined = root;
  for (const seg of path.split('.').slice(1)) {
    const name = seg.replace(/(\[\]|\{\})+$/, '');
    node = node?.properties?.[name];
    for (const suffix of seg.slice(name.length).match(/\[\]|\{\}/g) ?? []) {
      node = suffix === '[]' ? node?.items : (node?.additionalProperties as CrdSchema | undefined);
    }
  }
  return node;
}

test(
  'hand-written schemas match the v1.6.1 standard CRDs',
  { skip: crdDir ? false : 'CRDs not available' },
  () => {
    const diffs: string[] = [];
    for (const [kind, s] of Object.entries(GATEWAY_KIND_SCHEMAS)) {
      const crd = parseAllDocuments(readFileSync(join(crdDir!, s.crdFile), 'utf8'))[0].toJS() as {
        spec: {
          names: { kind: string };
          versions: { name: string; served: boolean; schema: { openAPIV3Schema: CrdSchema } }[];
        };
      };
      assert.equal(crd.spec.names.kind, kind);
      const served = crd.spec.versions.filter((v) => v.served).map((v) => v.name);
      assert.deepEqual([...served].sort(), [...s.versions].sort(), `${kind}: served versions`);
      for (const v of crd.spec.versions.filter((x) => x.served)) {
        const root = v.schema.openAPIV3Schema;
        assert.deepEqual(root.required, ['spec'], `${kind} ${v.name}: spec is required`);
        const topLevel = Object.keys(root.properties ?? {}).filter((k) => k !== 'status');
        assert.deepEqual(
          topLevel.sort(),
          ['apiVersion', 'kind', 'metadata', 'spec'],
          `${kind} ${v.name}: top level`,
        );
        compare(root.properties!.spec, s.spec, `${kind}(${v.name}).spec`, diffs);
      }
    }
    assert.deepEqual(diffs, [], `\n${diffs.join('\n')}`);
  },
);

const experimentalDir = findExperimentalCrdDir();

test(
  'fields marked experimental match the v1.6.1 experimental CRDs',
  { skip: crdDir && experimentalDir ? false : 'experimental CRDs not available' },
  () => {
    assert.ok(experimentalFields.length > 0, 'the standard comparison ran and met the experimental fields');
    const diffs: string[] = [];
    for (const { path, node } of experimentalFields) {
      const kind = path.slice(0, path.indexOf('('));
      const version = path.slice(path.indexOf('(') + 1, path.indexOf(')'));
      const file = GATEWAY_KIND_SCHEMAS[kind as keyof typeof GATEWAY_KIND_SCHEMAS].crdFile;
      const crd = parseAllDocuments(readFileSync(join(experimentalDir!, file), 'utf8'))[0].toJS() as {
        spec: { versions: { name: string; schema: { openAPIV3Schema: CrdSchema } }[] };
      };
      const root = crd.spec.versions.find((v) => v.name === version)!.schema.openAPIV3Schema;
      const at = crdNodeAt(root, path);
      if (!at) diffs.push(`${path}: not in the experimental CRD`);
      else compare(at, node, path, diffs);
    }
    assert.deepEqual(diffs, [], `\n${diffs.join('\n')}`);
  },
);

test('every standard CRD Convoy reads has a schema', { skip: crdDir ? false : 'CRDs not available' }, () => {
  const files = readdirSync(crdDir!).filter((f) => f.endsWith('.yaml'));
  for (const s of Object.values(GATEWAY_KIND_SCHEMAS)) assert.ok(files.includes(s.crdFile), s.crdFile);
});

/** Finds the legacy XListenerSet CRD (e2e/cluster/build-binaries.sh crds, or the Go module cache). */
function findLegacyCrd(): string | undefined {
  const file = 'gateway.networking.x-k8s.io_xlistenersets.yaml';
  const candidates: string[] = [];
  if (process.env.CONVOY_CRD_DIR)
    candidates.push(join(process.env.CONVOY_CRD_DIR, '..', 'crds-legacy', file));
  const cacheRoot = process.env.CONVOY_CACHE ?? join(homedir(), '.cache', 'convoy');
  if (existsSync(cacheRoot)) {
    for (const d of readdirSync(cacheRoot)) candidates.push(join(cacheRoot, d, 'crds-legacy', file));
  }
  try {
    const modcache = execFileSync('go', ['env', 'GOMODCACHE'], { encoding: 'utf8', timeout: 10_000 }).trim();
    if (modcache) {
      candidates.push(
        join(modcache, `sigs.k8s.io/gateway-api@${XLISTENERSET_CRD_RELEASE}/config/crd/experimental`, file),
      );
    }
  } catch {
    // no Go toolchain: fine
  }
  return candidates.find((f) => existsSync(f));
}

const legacyCrd = findLegacyCrd();

test(
  `the XListenerSet schema matches the ${XLISTENERSET_CRD_RELEASE} experimental CRD`,
  { skip: legacyCrd ? false : 'legacy CRD not available' },
  () => {
    const crd = parseAllDocuments(readFileSync(legacyCrd!, 'utf8'))[0].toJS() as {
      metadata: { annotations: Record<string, string> };
      spec: {
        group: string;
        names: { kind: string };
        versions: { name: string; served: boolean; schema: { openAPIV3Schema: CrdSchema } }[];
      };
    };
    assert.equal(
      crd.metadata.annotations['gateway.networking.k8s.io/bundle-version'],
      XLISTENERSET_CRD_RELEASE,
    );
    assert.equal(crd.spec.group, 'gateway.networking.x-k8s.io');
    assert.equal(crd.spec.names.kind, 'XListenerSet');
    assert.deepEqual(
      crd.spec.versions.filter((v) => v.served).map((v) => v.name),
      ['v1alpha1'],
    );
    const diffs: string[] = [];
    compare(
      crd.spec.versions[0].schema.openAPIV3Schema.properties!.spec,
      xListenerSetSpec,
      'XListenerSet.spec',
      diffs,
    );
    assert.deepEqual(diffs, [], `\n${diffs.join('\n')}`);
  },
);
