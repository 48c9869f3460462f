/**
 * The file provider's problem list: what is wrong with which file and document, as served on
 * /status/problems, logged once when it appears and once when it is resolved, and counted in
 * the convoy_invalid_objects gauge.
 */
import type { Logger } from '../../observability/logger';
import type { ConvoyMetrics } from '../../observability/metrics';

export interface FileProblem {
  /** Path relative to the provider's directory. */
  file: string;
  /** 0-based index of the YAML document in the file (absent for whole-file problems and JSON). */
  document?: number;
  kind?: string;
  name?: string;
  message: string;
}

/** " (document 2, 0-based)" for messages, or "" for whole-file problems. */
export function docSuffix(document: number | undefined): string {
  return document === undefined ? '' : ` (document ${document}, 0-based)`;
}

/** Keeps the current problem list; logs only the changes, so a rescan repeats nothing. */
export class ProblemReport {
  private current: FileProblem[] = [];
  private ids = new Set<string>();

  constructor(
    private readonly logger: Logger,
    private readonly metrics?: ConvoyMetrics,
  ) {}

  list(): FileProblem[] {
    return this.current.map((p) => ({ ...p }));
  }

  get size(): number {
    return this.current.length;
  }

  /**
   * Replaces the list. Each problem is identified by all its fields, so one whose message
   * changes is logged as new and the old one as resolved.
   */
  set(problems: FileProblem[]): void {
    const ids = new Set<string>();
    for (const p of problems) {
      const id = JSON.stringify(p);
      ids.add(id);
      if (!this.ids.has(id)) {
        this.logger.warn(
          { file: p.file, document: p.document, kind: p.kind, name: p.name },
          `${p.file}${docSuffix(p.document)}: ${p.message}`,
        );
      }
    }
    for (const id of this.ids) {
      if (!ids.has(id)) {
        const p = JSON.parse(id) as FileProblem;
        this.logger.info({ file: p.file, document: p.document }, 'problem resolved');
      }
    }
    this.ids = ids;
    this.current = problems;
    this.metrics?.invalidObjects.set(problems.length);
  }
}
