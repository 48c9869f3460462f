import * as fs from 'node:fs';
import * as path from 'node:path';

/** The repository root: the nearest directory above this file with a package.json (works from dist/). */
export function repoRoot(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
  }
  throw new Error('package.json not found above ' + __dirname);
}
