import * as fs from 'node:fs';

/**
 * Ends an Envoy left running by an earlier Convoy that was killed without draining
 * (docs/operations.md §14). Managed Envoys run in their own process group, so a SIGKILLed Convoy
 * leaves them behind holding their listener ports. The pid file alone is not trusted: the process
 * is signalled only when its command line names this Envoy's bootstrap file.
 */

/** True when process `pid` is alive and its command line contains `bootstrapFile`. */
function isOurEnvoy(pid: number, bootstrapFile: string): boolean {
  try {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmdline.includes(bootstrapFile);
  } catch {
    return false;
  }
}

/** Signals the process in `pidFile` (when it is this bootstrap's Envoy) and waits up to `waitMs` for it to go. */
export async function endStaleEnvoy(
  pidFile: string,
  bootstrapFile: string,
  waitMs = 5_000,
): Promise<number | undefined> {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(pid) || pid <= 1 || !isOurEnvoy(pid, bootstrapFile)) return undefined;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return undefined;
  }
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline && isOurEnvoy(pid, bootstrapFile))
    await new Promise((r) => setTimeout(r, 100));
  if (isOurEnvoy(pid, bootstrapFile)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  return pid;
}
