import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from './cluster';

/**
 * Makes the current node process run inside the private network world of netns-run.sh. Outside
 * it, the process re-executes itself through the script with the same Node flags, arguments,
 * environment and stdio (so a `node --test` parent reads the child's report as its own) and exits
 * with the child's status; inside it, this returns at once. Call it before defining any test.
 */
export function enterPrivateWorld(): void {
  if (process.env.CONVOY_PRIVATE_WORLD === '1') return;
  const script = path.join(REPO_ROOT, 'e2e', 'cluster', 'netns-run.sh');
  const res = spawnSync('bash', [script, process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: process.env,
  });
  if (res.error) throw res.error;
  process.exit(res.status ?? 1);
}
