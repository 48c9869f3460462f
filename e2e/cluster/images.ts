/**
 * The pod runner's image table: which local program stands in for a container image, since no
 * container runtime exists here. A container runs as `binary ...prefixArgs ...command[1..] ...args`
 * when its command names the image's entrypoint (or is empty), else its command runs as given.
 * Pure: paths come from the caller, so the table is unit-tested without any binary present.
 */

export interface ImageBinaries {
  /** echo-basic built by e2e/conformance/build.sh. */
  echoBasic: string;
  /** e2e/conformance/dns-server built by e2e/conformance/build.sh: the coredns stand-in. */
  dnsServer: string;
  /** The project's Envoy (.venv/bin/envoy). */
  envoy: string;
  /** The Node binary that runs Convoy. */
  node: string;
  /** dist/src/cli/main.js of this checkout. */
  convoyMain: string;
}

export interface ImageProgram {
  /** What the image stands for, for logs and the pod's containerStatuses.imageID. */
  kind: 'echo-basic' | 'envoy' | 'convoy' | 'coredns';
  binary: string;
  /** Arguments put before the container's own (e.g. the script Node runs). */
  prefixArgs: string[];
  /** Names a container command may use for this entrypoint (`envoy`, `/usr/local/bin/envoy`). */
  entrypoints: string[];
}

/** Where an image's tag or digest starts, so `registry:5000/a/b:tag` keeps its port. */
function repositoryOf(image: string): string {
  const at = image.indexOf('@');
  const noDigest = at >= 0 ? image.slice(0, at) : image;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
}

/**
 * The program standing in for `image`, or undefined when the table has none (the pod then stays
 * Waiting with reason ErrImagePull, as a kubelet reports an image it cannot get).
 *
 * coredns maps to dns-server (e2e/conformance/dns-server), which answers what the suite's Corefile
 * asks of zone foo.bar.com (whoami) and refuses every other name instead of forwarding it to public
 * resolvers; it takes the container's `-conf` argument and ignores it.
 */
export function programForImage(image: string, bins: ImageBinaries): ImageProgram | undefined {
  const repo = repositoryOf(image);
  const last = repo.slice(repo.lastIndexOf('/') + 1);
  if (
    repo === 'registry.k8s.io/gateway-api/echo-basic' ||
    repo === 'gcr.io/k8s-staging-gateway-api/echo-basic'
  )
    return {
      kind: 'echo-basic',
      binary: bins.echoBasic,
      prefixArgs: [],
      entrypoints: ['echo-basic', '/echo-basic'],
    };
  if (/^(docker\.io\/)?envoyproxy\/envoy(-[a-z0-9-]+)?$/.test(repo))
    return {
      kind: 'envoy',
      binary: bins.envoy,
      prefixArgs: [],
      entrypoints: ['envoy', '/usr/local/bin/envoy', '/docker-entrypoint.sh'],
    };
  if (last === 'convoy' || repo === 'convoy')
    return {
      kind: 'convoy',
      binary: bins.node,
      prefixArgs: [bins.convoyMain],
      entrypoints: ['convoy', '/usr/local/bin/convoy'],
    };
  if (last === 'coredns')
    return {
      kind: 'coredns',
      binary: bins.dnsServer,
      prefixArgs: [],
      entrypoints: ['/coredns', 'coredns'],
    };
  return undefined;
}

/**
 * The argv a container runs, following the kubelet's rules: `command` replaces the image's
 * entrypoint and `args` its default arguments. A command naming the image's entrypoint runs the
 * table's binary; any other command (e.g. `/bin/sh -c ...`) runs as given.
 */
export function containerArgv(
  program: ImageProgram,
  command: readonly string[] | undefined,
  args: readonly string[] | undefined,
): string[] {
  const cmd = command ?? [];
  if (cmd.length === 0) return [program.binary, ...program.prefixArgs, ...(args ?? [])];
  if (program.entrypoints.includes(cmd[0]))
    return [program.binary, ...program.prefixArgs, ...cmd.slice(1), ...(args ?? [])];
  return [...cmd, ...(args ?? [])];
}
