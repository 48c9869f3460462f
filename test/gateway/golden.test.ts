import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as prettier from 'prettier';
import { parseAllDocuments, parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { FileProvider } from '../../src/providers/files/provider';
import { ObjectStore } from '../../src/store/store';
import { silentLogger } from '../../src/observability/logger';
import { buildGateways } from '../../src/gateway/build';
import type { FleetModel, SecretModel } from '../../src/model/fleet';
import {
  EXAMPLE_CERT,
  EXAMPLE_KEY,
  EXPIRED_CERT,
  EXPIRED_KEY,
  INTERMEDIATE_CERT,
  LEAF_CERT,
  LEAF_KEY,
  ROOT_CERT,
  SELF_CERT,
  SELF_KEY,
  TENANT_CERT,
  TENANT_KEY,
} from '../support/certs';
import { repoRoot } from '../support/repo';

/**
 * Golden tests for the gateway build: each test/gateway/golden/<case>.in.yaml holds Kubernetes
 * objects; the file provider reads it exactly as `convoy serve --from-dir` would (parse, fill
 * metadata, validate), the build the controller runs turns the store into statuses and
 * FleetModels, and the result is compared with <case>.out.yaml. Regenerate with UPDATE_GOLDEN=1
 * and review every changed line before committing (test/gateway/golden/README.md).
 *
 * Certificates come from the committed test-only fixtures: a YAML scalar written `'${NAME}'` (or
 * `'${LEAF_CERT}${INTERMEDIATE_CERT}'` for a chain) is replaced by those PEM texts before the
 * file is read. In the output, certificates and keys appear only as fixture names (or a SHA-256
 * prefix), never as key bytes.
 */

const GOLDEN_DIR = path.join(repoRoot(), 'test', 'gateway', 'golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

/** What `convoy serve` passes: the default controller name and one --gateway-address. */
const BUILD_OPTIONS = {
  controllerName: 'convoy.dev/gateway-controller',
  now: '2026-03-01T12:00:00Z',
  externalNameServices: false,
  gatewayAddresses: { static: ['192.0.2.10'] },
};

const PEM_FIXTURES: Record<string, string> = {
  EXAMPLE_CERT,
  EXAMPLE_KEY,
  TENANT_CERT,
  TENANT_KEY,
  ROOT_CERT,
  INTERMEDIATE_CERT,
  LEAF_CERT,
  LEAF_KEY,
  SELF_CERT,
  SELF_KEY,
  EXPIRED_CERT,
  EXPIRED_KEY,
};

/** Kinds whose precedence depends on creationTimestamp: inputs must fix it (file mode stamps "now"). */
const TIMESTAMPED_KINDS = new Set(['ListenerSet', 'HTTPRoute', 'GRPCRoute', 'TLSRoute']);

/**
 * The input text with every YAML scalar made only of `${NAME}` tokens (quoted or not) replaced by
 * a double-quoted string holding those fixtures' PEM texts, concatenated in order.
 */
function withFixtures(text: string): string {
  return text.replace(/(["']?)((?:\$\{[A-Z_]+\})+)\1/g, (_match, _quote, tokens: string) => {
    const names = tokens.slice(2, -1).split('}${');
    return JSON.stringify(
      names
        .map((name) => {
          const pem = PEM_FIXTURES[name];
          if (pem === undefined) throw new Error(`unknown fixture \${${name}}`);
          return pem;
        })
        .join(''),
    );
  });
}

/** Objects of TIMESTAMPED_KINDS in the input that lack metadata.creationTimestamp. */
function missingTimestamps(text: string): string[] {
  const out: string[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (!('toJS' in doc)) continue;
    const o = doc.toJS() as { kind?: string; metadata?: { name?: string; creationTimestamp?: unknown } };
    if (o?.kind && TIMESTAMPED_KINDS.has(o.kind) && o.metadata?.creationTimestamp === undefined)
      out.push(`${o.kind} ${o.metadata?.name}`);
  }
  return out;
}

/** Reads one input file through a FileProvider over a directory holding only that file. */
async function loadThroughFileProvider(
  caseName: string,
  text: string,
): Promise<{ store: ObjectStore; problems: unknown[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'convoy-golden-'));
  try {
    fs.writeFileSync(path.join(dir, `${caseName}.in.yaml`), text);
    const store = new ObjectStore();
    const provider = new FileProvider({ dir, store, logger: silentLogger(), pollIntervalMs: 0 });
    await provider.start();
    const problems = provider.problems();
    await provider.stop();
    return { store, problems };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----\n?/g;

/** A PEM text as the fixture names of its blocks, in order; unknown blocks as a SHA-256 prefix. */
function pemNames(pem: string): string[] {
  const byBlock = new Map<string, string>();
  for (const [name, text] of Object.entries(PEM_FIXTURES))
    for (const block of text.match(PEM_BLOCK) ?? []) byBlock.set(block.trim(), name);
  return (pem.match(PEM_BLOCK) ?? [pem]).map(
    (block) =>
      byBlock.get(block.trim()) ?? `sha256:${createHash('sha256').update(block).digest('hex').slice(0, 16)}`,
  );
}

function renderSecret(s: SecretModel): Record<string, unknown> {
  return {
    name: s.name,
    certificateChain: pemNames(s.certificateChain),
    privateKey: pemNames(s.privateKey).join(' + '),
  };
}

function renderFleet(f: FleetModel): Record<string, unknown> {
  return { ...f, secrets: f.secrets.map(renderSecret) };
}

async function render(file: string, value: unknown, caseName: string): Promise<string> {
  const header =
    `# Generated by test/gateway/golden.test.ts from ${caseName}.in.yaml (UPDATE_GOLDEN=1).\n` +
    '# problems: what the file provider refused; statuses: what GET /status shows after one build;\n' +
    '# fleets: the FleetModel of each Gateway (certificates and keys by fixture name).\n';
  const text = header + stringifyYaml(value, { lineWidth: 0, aliasDuplicateObjects: false });
  const options = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(text, { ...options, parser: 'yaml', filepath: file });
}

const cases = fs
  .readdirSync(GOLDEN_DIR)
  .filter((f) => f.endsWith('.in.yaml'))
  .map((f) => f.slice(0, -'.in.yaml'.length))
  .sort();

describe('gateway build goldens (test/gateway/golden)', () => {
  test('there are cases', () => assert.ok(cases.length >= 12, `only ${cases.length} cases`));

  for (const name of cases) {
    test(name, async () => {
      const input = fs.readFileSync(path.join(GOLDEN_DIR, `${name}.in.yaml`), 'utf8');
      assert.deepEqual(missingTimestamps(input), [], 'set metadata.creationTimestamp on these objects');
      const { store, problems } = await loadThroughFileProvider(name, withFixtures(input));
      const result = buildGateways(store, BUILD_OPTIONS);
      const actual = JSON.parse(
        JSON.stringify({ problems, statuses: result.statuses, fleets: result.fleets.map(renderFleet) }),
      ) as unknown;

      const file = path.join(GOLDEN_DIR, `${name}.out.yaml`);
      if (UPDATE) {
        const text = await render(file, actual, name);
        assert.ok(!/PRIVATE KEY|BEGIN CERTIFICATE/.test(text), 'key material in a golden output');
        fs.writeFileSync(file, text);
      }
      assert.ok(fs.existsSync(file), `golden file ${file} is missing; run with UPDATE_GOLDEN=1`);
      assert.deepStrictEqual(actual, parseYaml(fs.readFileSync(file, 'utf8')));
    });
  }
});
