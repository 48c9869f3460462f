import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { UsageError, defineCommand, parseCommand } from './args';
import { migrateManifests, type MigrationNote, type MigrationResult } from './migrate-rewrite';

/**
 * `convoy migrate DIR|-` (docs/operations.md §24): reads manifests, prints them with legacy
 * XListenerSets rewritten as ListenerSet v1 and the references to them following (pipe it to
 * `kubectl apply -f -`), and reports on stderr what moved and what could not.
 */

/** Exit status: something could not be moved (the report says what and how to fix it). */
export const EXIT_NOT_MOVED = 3;

/** Bound on one input file: manifests are small; a huge file is a mistake, not a migration. */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

export const migrateSpec = defineCommand({
  name: 'migrate',
  summary: 'rewrite legacy XListenerSet manifests (and route parentRefs) to ListenerSet v1',
  positionals: 'DIR|-',
  options: {
    'assigned-ports': {
      type: 'boolean',
      description:
        "Give a listener without a port the port its XListenerSet's status reports (the one Convoy assigned), instead of leaving the set unmoved.",
    },
  },
  details: `Reads the YAML or JSON files under DIR (sorted, recursively; hidden ones skipped), or documents on
stdin with -, e.g. the output of "kubectl get xlistenersets,httproutes,grpcroutes,tlsroutes,referencegrants -A -o yaml".
Prints every manifest to stdout: each XListenerSet (gateway.networking.x-k8s.io/v1alpha1) as a
ListenerSet (gateway.networking.k8s.io/v1) of the same namespace and name, route parentRefs to it
as kind ListenerSet, ReferenceGrants with a ListenerSet "from" next to each XListenerSet one; the
rest unchanged. Rewritten objects lose their status and server-owned metadata. An XListenerSet
with a listener without a port is not moved (ListenerSet v1 requires a port): the report suggests
the port Convoy assigned when the input's status says it, and --assigned-ports uses it.

Once applied, Convoy serves the ListenerSet in place of the XListenerSet of the same name (which
reports SupersededByListenerSet); delete the XListenerSets afterwards.

Exit status: 0 when everything moved; ${EXIT_NOT_MOVED} when something could not be moved (reported on stderr);
1 when the input cannot be read or parsed; 2 for a bad flag.

Examples:
  convoy migrate manifests/ | kubectl apply --dry-run=server -f -
  kubectl get xlistenersets,httproutes -A -o yaml | convoy migrate --assigned-ports - > v1.yaml`,
});

/** Lists the manifest files under `dir`, sorted, skipping hidden entries. */
function manifestFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.name.startsWith('.')) continue;
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && /\.(ya?ml|json)$/i.test(e.name)) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** Reads stdin up to MAX_FILE_BYTES. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    size += (chunk as Buffer).length;
    if (size > MAX_FILE_BYTES) throw new Error(`stdin is larger than ${MAX_FILE_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses the documents of one YAML/JSON text; throws with the source and position of an error. */
export function parseDocuments(text: string, source: string): unknown[] {
  const out: unknown[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`${source}: ${doc.errors[0].message}`);
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) out.push(value);
  }
  return out;
}

/** Returns the manifests of a migration as one YAML stream (what stdout gets). */
export function renderManifests(result: MigrationResult): string {
  return result.manifests
    .map((m) => stringify(m.object, { lineWidth: 0, aliasDuplicateObjects: false }))
    .join('---\n');
}

/** Returns the report lines for stderr. */
export function renderNotes(notes: readonly MigrationNote[]): string {
  return notes
    .map((n) => `${n.kind === 'moved' ? 'moved    ' : 'NOT MOVED'} ${n.object}: ${n.message}\n`)
    .join('');
}

/** Runs `convoy migrate`; resolves with its exit status. */
export async function migrateCommand(argv: string[]): Promise<number> {
  const parsed = parseCommand(migrateSpec, argv);
  if (!parsed) return 0;
  const [source, ...extra] = parsed.positionals;
  if (source === undefined || extra.length > 0) throw new UsageError('expected one DIR or -', 'migrate');
  const documents: unknown[] = [];
  try {
    if (source === '-') documents.push(...parseDocuments(await readStdin(), 'stdin'));
    else {
      const files = fs.statSync(source).isDirectory() ? manifestFiles(source) : [source];
      for (const f of files) {
        if (fs.statSync(f).size > MAX_FILE_BYTES)
          throw new Error(`${f} is larger than ${MAX_FILE_BYTES} bytes`);
        documents.push(...parseDocuments(fs.readFileSync(f, 'utf8'), f));
      }
    }
  } catch (err) {
    process.stderr.write(`convoy migrate: ${(err as Error).message}\n`);
    return 1;
  }
  const result = migrateManifests(documents, { assignedPorts: parsed.values['assigned-ports'] === true });
  process.stdout.write(renderManifests(result));
  process.stderr.write(renderNotes(result.notes));
  return result.notes.some((n) => n.kind === 'blocked') ? EXIT_NOT_MOVED : 0;
}
