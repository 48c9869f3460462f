/**
 * Returns whether `path` is an absolute file path another process may be told to open: it starts
 * with `/`, holds no control characters and is at most 4096 characters (PATH_MAX).
 *
 * Envoy opens access-log files given by flags and by EnvoyFleet parameters; a relative path would
 * depend on its working directory, and control characters have no place in a file name.
 */
export function isAbsoluteFilePath(path: string): boolean {
  return path.startsWith('/') && !/\p{Cc}/u.test(path) && path.length <= 4096;
}
