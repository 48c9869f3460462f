import { parseArgs } from 'node:util';

/**
 * Tiny, dependency-free argument parsing shared by the convoy subcommands: a declarative option
 * table drives both node:util parseArgs and the --help text, so the two cannot drift apart.
 */

/** A mistake in how the command was invoked; main prints it with a hint and exits 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  description: string;
  /** Placeholder in help, e.g. HOST:PORT. */
  valueName?: string;
  /** Shown in help; applied by parseCommand when the option is absent. */
  default?: string;
  /** For strings: the accepted values. */
  choices?: readonly string[];
  required?: boolean;
  /** For strings: may be given several times; parsed as a list (empty when absent). */
  multiple?: boolean;
}

export interface CommandSpec<O extends Record<string, OptionSpec>> {
  /** e.g. "bootstrap" */
  name: string;
  summary: string;
  /** Extra usage text after the options, e.g. examples. */
  details?: string;
  options: O;
  /** Name of positional arguments, e.g. "[NODE]"; none allowed when absent. */
  positionals?: string;
}

export type ParsedOptions<O extends Record<string, OptionSpec>> = {
  [K in keyof O]: O[K]['type'] extends 'boolean'
    ? boolean
    : O[K]['multiple'] extends true
      ? string[]
      : O[K]['required'] extends true
        ? string
        : O[K]['default'] extends string
          ? string
          : string | undefined;
};

export interface Parsed<O extends Record<string, OptionSpec>> {
  values: ParsedOptions<O>;
  positionals: string[];
}

/** Identity helper that keeps option literals (required: true, defaults) in the parsed type. */
export function defineCommand<const O extends Record<string, OptionSpec>>(
  spec: CommandSpec<O>,
): CommandSpec<O> {
  return spec;
}

const HELP: OptionSpec = { type: 'boolean', short: 'h', description: 'Show this help.' };

export function formatHelp<O extends Record<string, OptionSpec>>(spec: CommandSpec<O>): string {
  const lines = [
    `convoy ${spec.name} — ${spec.summary}`,
    '',
    `Usage: convoy ${spec.name} [options]${spec.positionals ? ' ' + spec.positionals : ''}`,
    '',
    'Options:',
  ];
  const entries = Object.entries({ ...spec.options, help: HELP });
  const heads = entries.map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : '    '}--${name}`;
    return o.type === 'string' ? `${flag} ${o.valueName ?? 'VALUE'}${o.multiple ? ' ...' : ''}` : flag;
  });
  const width = Math.max(...heads.map((h) => h.length));
  entries.forEach(([, o], i) => {
    let text = o.description;
    if (o.choices) text += ` One of: ${o.choices.join(', ')}.`;
    if (o.default !== undefined) text += ` Default: ${o.default}.`;
    if (o.required) text += ' Required.';
    lines.push(`  ${heads[i].padEnd(width)}  ${text}`);
  });
  if (spec.details) lines.push('', spec.details.trimEnd());
  return lines.join('\n') + '\n';
}

/**
 * Parses argv for one subcommand. Returns undefined after printing help when -h/--help is
 * present; throws UsageError for unknown options, missing values, bad choices or missing
 * required options.
 */
export function parseCommand<O extends Record<string, OptionSpec>>(
  spec: CommandSpec<O>,
  argv: string[],
  out: (text: string) => void = (t) => process.stdout.write(t),
): Parsed<O> | undefined {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const [name, o] of Object.entries(spec.options)) {
    options[name] = {
      type: o.type,
      ...(o.short ? { short: o.short } : {}),
      ...(o.multiple ? { multiple: true } : {}),
    };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional.*$/s, '.'), spec.name);
  }
  if (parsed.values.help) {
    out(formatHelp(spec));
    return undefined;
  }
  if (!spec.positionals && parsed.positionals.length > 0) {
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[0])}`, spec.name);
  }
  const values: Record<string, string | string[] | boolean | undefined> = {};
  for (const [name, o] of Object.entries(spec.options)) {
    const v = parsed.values[name] as string | string[] | boolean | undefined;
    if (o.type === 'boolean') {
      values[name] = v === true;
      continue;
    }
    if (o.multiple) {
      values[name] = (v as string[] | undefined) ?? [];
      continue;
    }
    const s = (v as string | undefined) ?? o.default;
    if (s === undefined && o.required) throw new UsageError(`--${name} is required`, spec.name);
    if (s !== undefined && o.choices && !o.choices.includes(s)) {
      throw new UsageError(
        `--${name} must be one of ${o.choices.join(', ')}, got ${JSON.stringify(s)}`,
        spec.name,
      );
    }
    values[name] = s;
  }
  return { values: values as ParsedOptions<O>, positionals: parsed.positionals };
}
