#!/usr/bin/env node
import * as fs from 'node:fs';
import * as path from 'node:path';
import { UsageError, defineCommand, parseCommand } from './args';
import { formatOutput, outputOption } from './output';

const versionSpec = defineCommand({
  name: 'version',
  summary: 'print the Convoy and Node.js versions',
  options: { output: outputOption('table') },
  details: `Exit status: 0.

Examples:
  convoy version
  convoy version -o json`,
});

/**
 * The `convoy` command. Subcommands load lazily so `convoy bootstrap` (run in an init container)
 * does not pay for gRPC, the Envoy protos or the Kubernetes client.
 */

interface Subcommand {
  summary: string;
  /** Resolves with the exit status when it is not 0 (a command's own documented status). */
  run: (argv: string[]) => Promise<void | number>;
}

const COMMANDS: Record<string, Subcommand> = {
  serve: {
    summary: 'run the control plane (Gateway API objects from a directory or Kubernetes → xDS)',
    run: async (argv) => {
      // File mode: the parse workers start loading before the control plane's own modules do
      // (docs/architecture.md §10.4); a guess from the raw arguments, so a wrong one costs only
      // idle workers that keep nothing alive.
      if (argv.some((a) => a === '--from-dir' || a.startsWith('--from-dir=')))
        (await import('../providers/files/parse-pool')).prestartDefaultPool();
      return (await import('./serve')).serveCommand(argv);
    },
  },
  bootstrap: {
    summary: 'write an Envoy bootstrap that connects one Envoy of a Gateway fleet to Convoy',
    run: async (argv) => (await import('./bootstrap')).bootstrapCommand(argv),
  },
  certgen: {
    summary: "create Convoy's xDS CA, its serving certificate and Gateways' client certificates",
    run: async (argv) => (await import('./certgen')).certgenCommand(argv),
  },
  'envoy-shutdown-manager': {
    summary: 'drain the Envoy of a managed fleet pod when its preStop hook asks (sidecar)',
    run: async (argv) => (await import('./envoy-shutdown')).envoyShutdownCommand(argv),
  },
  status: {
    summary: 'show the Gateway API conditions Convoy computed, per object, listener and route parent',
    run: async (argv) => (await import('./status')).statusCommand(argv),
  },
  'proxy-status': {
    summary: 'show every connected Envoy by Gateway: each xDS type synced, stale, not sent or rejected',
    run: async (argv) => (await import('./proxy-status')).proxyStatusCommand(argv),
  },
  'config-dump': {
    summary: 'show what one connected Envoy received from Convoy (decoded, secrets redacted)',
    run: async (argv) => (await import('./config-dump')).configDumpCommand(argv),
  },
  translate: {
    summary: 'build Gateway API YAML (a directory or stdin) into Envoy resources and statuses, offline',
    run: async (argv) => (await import('./translate')).translateCommand(argv),
  },
  migrate: {
    summary: 'rewrite legacy XListenerSet manifests (and route parentRefs) to ListenerSet v1',
    run: async (argv) => (await import('./migrate')).migrateCommand(argv),
  },
  describe: {
    summary:
      'explain which listener serves a hostname (or a listener): certificate, routes, backends, losers',
    run: async (argv) => (await import('./describe')).describeCommand(argv),
  },
  version: {
    summary: 'print the Convoy and Node.js versions',
    run: async (argv) => {
      const parsed = parseCommand(versionSpec, argv);
      if (!parsed) return;
      const data = {
        convoy: convoyVersion(),
        node: process.version,
        platform: `${process.platform}/${process.arch}`,
      };
      process.stdout.write(
        formatOutput(
          parsed.values.output,
          data,
          () => `convoy ${data.convoy} (node ${data.node}, ${data.platform})\n`,
        ),
      );
    },
  },
};

export function convoyVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'package.json');
    if (!fs.existsSync(candidate)) continue;
    const pkg = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === 'convoy' && pkg.version) return pkg.version;
  }
  return 'unknown';
}

export function mainHelp(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'convoy — a Kubernetes Gateway API control plane for fleets of Envoy proxies',
    '',
    'Usage: convoy <command> [options]',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    'Run "convoy <command> --help" for the options of a command.',
    '',
  ].join('\n');
}

/** Runs the CLI; resolves with the process exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') {
    if (command === 'help' && rest[0] && COMMANDS[rest[0]]) return main([rest[0], '--help']);
    process.stdout.write(mainHelp());
    return command === undefined ? 2 : 0;
  }
  if (command === '--version' || command === '-v') return main(['version']);
  const sub = COMMANDS[command];
  if (!sub) {
    process.stderr.write(`convoy: unknown command ${JSON.stringify(command)}\n\n${mainHelp()}`);
    return 2;
  }
  try {
    return (await sub.run(rest)) ?? 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(
        `convoy ${err.command ?? command}: ${err.message}\nRun "convoy ${command} --help" for usage.\n`,
      );
      return 2;
    }
    const e = err as Error & { code?: string };
    // parseArgs errors from commands that parse their own flags are usage errors too.
    if (typeof e.code === 'string' && e.code.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`convoy ${command}: ${e.message}\nRun "convoy ${command} --help" for usage.\n`);
      return 2;
    }
    // One line: the details (a YAML excerpt, a stack) are for CONVOY_DEBUG.
    process.stderr.write(`convoy ${command}: ${(e?.message ?? String(err)).split('\n')[0]}\n`);
    if (process.env.CONVOY_DEBUG) process.stderr.write(`${e?.stack ?? ''}\n`);
    return 1;
  }
}

/**
 * After a failure the process must end even if some library still holds a handle open: the
 * commands close what they opened, so this only fires on a bug, and says so.
 */
const FAILURE_EXIT_GRACE_MS = 5_000;

function exitAfterFailure(code: number): void {
  process.exitCode = code;
  setTimeout(() => {
    process.stderr.write(`convoy: still running ${FAILURE_EXIT_GRACE_MS} ms after a failure; exiting\n`);
    process.exit(code);
  }, FAILURE_EXIT_GRACE_MS).unref();
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code === 0) process.exitCode = 0;
      else exitAfterFailure(code);
    },
    (err: unknown) => {
      process.stderr.write(`convoy: ${String(err)}\n`);
      exitAfterFailure(1);
    },
  );
}
