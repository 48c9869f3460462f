import * as fs from 'node:fs';
import * as path from 'node:path';

/** Returns the repository root: the nearest folder above this file with a package.json (also from dist/). */
export function repoRoot(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
  }
  throw new Error('package.json not found above ' + __dirname);
}
