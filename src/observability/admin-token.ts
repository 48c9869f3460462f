import * as crypto from 'node:crypto';
import * as fs from 'node:fs/promises';

/**
 * The admin server's bearer token, read from a file (`convoy serve --admin-token-file`) and read
 * again whenever the file changes, so a rotated Kubernetes Secret or a rewritten file takes
 * effect without a restart (docs/security.md §3).
 */

/** Shortest token accepted: anything shorter could be guessed by trying. */
export const MIN_TOKEN_LENGTH = 16;
const MAX_TOKEN_LENGTH = 4096;

/** Checks a token file's content and returns the token (surrounding whitespace removed). */
export function parseToken(content: string, file: string): string {
  const token = content.trim();
  if (token.length === 0) throw new Error(`admin token file ${file} is empty`);
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new Error(`admin token in ${file} is shorter than ${MIN_TOKEN_LENGTH} characters`);
  }
  if (token.length > MAX_TOKEN_LENGTH) {
    throw new Error(`admin token in ${file} is longer than ${MAX_TOKEN_LENGTH} characters`);
  }
  // What an Authorization header can carry: visible ASCII, no spaces.
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new Error(`admin token in ${file} has spaces or characters outside visible ASCII`);
  }
  return token;
}

export class AdminTokenFile {
  /** The file state whose problem was last reported, so each is reported once. */
  private reported = '';

  private constructor(
    readonly file: string,
    private token: string,
    private stamp: string,
    private readonly onProblem: (message: string) => void,
  ) {}

  /** Reads the token file; throws a message naming the file when it is unreadable or invalid. */
  static async load(file: string, onProblem: (message: string) => void = () => {}): Promise<AdminTokenFile> {
    let content: string;
    let stamp: string;
    try {
      stamp = stampOf(await fs.stat(file));
      content = await fs.readFile(file, 'utf8');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw new Error(`cannot read admin token file ${file}: ${e.code ?? e.message}`, { cause: err });
    }
    return new AdminTokenFile(file, parseToken(content, file), stamp, onProblem);
  }

  /**
   * Returns the current token: the file's content when it changed since the last read and is
   * valid; otherwise the last good token, reporting the problem once per change of the file.
   */
  async current(): Promise<string> {
    let stamp: string;
    try {
      stamp = stampOf(await fs.stat(this.file));
    } catch (err) {
      this.problem(`missing:${(err as NodeJS.ErrnoException).code}`, err);
      return this.token;
    }
    if (stamp === this.stamp) return this.token;
    try {
      this.token = parseToken(await fs.readFile(this.file, 'utf8'), this.file);
      this.stamp = stamp;
    } catch (err) {
      this.problem(stamp, err);
    }
    return this.token;
  }

  private problem(key: string, err: unknown): void {
    if (this.reported === key) return;
    this.reported = key;
    this.onProblem(`${(err as Error).message}; the previous admin token stays in use`);
  }
}

function stampOf(st: { mtimeMs: number; size: number; ino: number }): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}`;
}

/** True when an Authorization header carries `Bearer <token>`; compares in constant time. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer ([\x21-\x7e]+)$/.exec(header ?? '')?.[1] ?? '';
  const a = crypto.createHash('sha256').update(given).digest();
  const b = crypto.createHash('sha256').update(token).digest();
  return crypto.timingSafeEqual(a, b) && given.length > 0;
}
