import { stringify } from 'yaml';

/**
 * The --output flag every command shares (docs/operations.md §1): `table` for people, `json` and
 * `yaml` for scripts. The structured forms print the same data, with keys in a fixed order.
 */

export const OUTPUT_FORMATS = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The option spec of --output with `fallback` as its default. */
export function outputOption<const D extends OutputFormat>(fallback: D) {
  return {
    type: 'string',
    short: 'o',
    valueName: 'FORMAT',
    description: 'Output format.',
    choices: OUTPUT_FORMATS,
    default: fallback,
  } as const;
}

/** `data` as JSON or YAML text, or the table `table()` renders, ending with a newline. */
export function formatOutput(format: string, data: unknown, table: () => string): string {
  if (format === 'json') return JSON.stringify(data, null, 2) + '\n';
  if (format === 'yaml') return stringify(data, { lineWidth: 0, aliasDuplicateObjects: false });
  return table();
}
