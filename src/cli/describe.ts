import { explainHost, explainListener } from '../gateway/describe';
import type { Candidate, ListenerDescription, PortExplanation } from '../gateway/describe';
import { UsageError, defineCommand, parseCommand } from './args';
import { BUILD_OPTIONS, offlineBuild } from './offline-build';
import { formatOutput, outputOption } from './output';

/**
 * `convoy describe host NAME DIR|-` and `convoy describe listener NS/OWNER/SECTION DIR|-`: why a
 * hostname is served the way it is, from the same offline build as `convoy translate`
 * (docs/operations.md §18); the explanation itself is src/gateway/describe.ts.
 */

/** Exit status: nothing matched (no listener serves the host, or no such listener). */
export const EXIT_NOT_FOUND = 3;

export const describeSpec = defineCommand({
  name: 'describe',
  summary: 'explain which listener serves a hostname (or a listener): certificate, routes, backends, losers',
  positionals: 'host NAME DIR|-  |  listener NAMESPACE/OWNER/SECTION DIR|-',
  options: { ...BUILD_OPTIONS, output: outputOption('table') },
  details: `describe host: for every Gateway and port with a listener whose hostname matches NAME, the listener
that serves it (ready, most specific hostname, first in precedence order), its certificates (subject,
names, validity), the routes answering NAME there and their backends, and for every other matching
listener why it lost (a conflict, a refused ListenerSet, an invalid listener, a more specific
hostname, precedence). describe listener: one listener of a Gateway or ListenerSet (OWNER is its
name), the same details for all of its routes, and the listeners sharing its port.
The objects are read from DIR (or stdin) and built as "convoy translate" does.

Exit status: 0 with an answer; ${EXIT_NOT_FOUND} when no listener serves NAME or no such listener exists;
1 when DIR cannot be read; 2 for a bad flag.

Examples:
  convoy describe host www.example.com examples
  convoy describe listener default/demo/https examples -o yaml`,
});

function renderListener(d: ListenerDescription, indent: string): string {
  const lines = [
    `${indent}${d.listener} (${d.protocol}${d.tlsMode ? ` ${d.tlsMode}` : ''}, port ${d.port}, hostname ${d.hostname ?? '(any)'})${d.ready ? '' : ' NOT READY'}`,
  ];
  for (const c of d.certificates) {
    lines.push(
      c.error
        ? `${indent}  certificate ${c.secret}: unreadable (${c.error})`
        : `${indent}  certificate ${c.secret}: ${c.subject}; names ${c.dnsNames?.join(', ') || '-'}; valid ${c.notBefore} to ${c.notAfter}`,
    );
  }
  if (d.routes.length === 0) lines.push(`${indent}  no route`);
  for (const r of d.routes) {
    lines.push(
      `${indent}  route ${r.route} (hostnames ${r.hostnames.join(', ')}) -> ${r.backends.join(', ') || 'no backend'}`,
    );
    if (r.problem) lines.push(`${indent}    ${r.problem}`);
  }
  for (const p of d.problems) lines.push(`${indent}  ${p.type}=${p.status} ${p.reason}: ${p.message}`);
  return lines.join('\n') + '\n';
}

function renderCandidates(title: string, list: Candidate[], indent: string): string {
  if (list.length === 0) return '';
  return (
    `${indent}${title}:\n` +
    list.map((c) => `${indent}  ${c.listener} (hostname ${c.hostname ?? '(any)'}): ${c.reason}\n`).join('')
  );
}

function renderHost(host: string, ports: PortExplanation[]): string {
  if (ports.length === 0) return `No listener of any Gateway matches ${host}.\n`;
  return ports
    .map(
      (p) =>
        `Gateway ${p.gateway}, port ${p.port}: ${host} is ${p.serving ? 'served by' : 'NOT served'}\n` +
        (p.serving ? renderListener(p.serving, '  ') : '') +
        renderCandidates('not serving it', p.lost, '  '),
    )
    .join('\n');
}

export async function describeCommand(argv: string[]): Promise<number> {
  const parsed = parseCommand(describeSpec, argv);
  if (!parsed) return 0;
  const v = parsed.values;
  const [what, name, source, ...extra] = parsed.positionals;
  if (what !== 'host' && what !== 'listener')
    throw new UsageError(
      'say what to describe: host NAME DIR, or listener NAMESPACE/OWNER/SECTION DIR',
      'describe',
    );
  if (name === undefined || source === undefined || extra.length > 0)
    throw new UsageError(`describe ${what} takes a name and one directory (or -)`, 'describe');
  let ref: [string, string, string] | undefined;
  if (what === 'listener') {
    const parts = name.split('/');
    if (parts.length !== 3 || parts.some((p) => p === ''))
      throw new UsageError(`a listener is NAMESPACE/OWNER/SECTION, got ${JSON.stringify(name)}`, 'describe');
    ref = parts as [string, string, string];
  }
  const build = await offlineBuild(source, v, 'describe');
  if (ref === undefined) {
    const ports = explainHost(build.state, name);
    process.stdout.write(formatOutput(v.output, { host: name, ports }, () => renderHost(name, ports)));
    return ports.some((p) => p.serving) ? 0 : EXIT_NOT_FOUND;
  }
  const found = explainListener(build.state, ...ref);
  process.stdout.write(
    formatOutput(v.output, found, () =>
      found.length === 0
        ? `No Gateway or ListenerSet ${ref[0]}/${ref[1]} has a listener ${ref[2]}.\n`
        : found
            .map(
              (f) =>
                `Gateway ${f.listener.gateway}\n` +
                renderListener(f.listener, '  ') +
                renderCandidates(`on port ${f.listener.port} too`, f.samePort, '  '),
            )
            .join('\n'),
    ),
  );
  return found.length > 0 ? 0 : EXIT_NOT_FOUND;
}
