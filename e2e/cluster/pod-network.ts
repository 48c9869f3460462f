import { execFile } from 'node:child_process';
import { AddressPool } from './address-pool';

/**
 * Pod networking inside the private world of e2e/cluster/netns-run.sh: each pod gets a nested
 * network namespace (`ip netns`, under the world's private /run) joined to the bridge by a veth
 * pair, an address from 192.0.2.0/24 and a default route via the bridge address, so it reaches
 * other pods, the load-balancer addresses and processes of the outer namespace (the API server
 * stays on loopback, out of the pods' reach).
 */

export const BRIDGE = 'cnv0';
export const BRIDGE_ADDRESS = '192.0.2.1';
export const POD_CIDR = '192.0.2.0/24';
export const LB_CIDR = '198.51.100.0/24';

/** Runs `ip ARGS...`; rejects with its stderr. */
export function ip(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('ip', args, (err, stdout, stderr) => {
      if (err) reject(new Error(`ip ${args.join(' ')}: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

/** Throws unless this process runs inside the private world (the bridge exists, env says so). */
export async function assertPrivateWorld(): Promise<void> {
  if (process.env.CONVOY_PRIVATE_WORLD !== '1')
    throw new Error('not inside the private network world: run through e2e/cluster/netns-run.sh');
  const out = await ip(['-o', '-4', 'addr', 'show', 'dev', BRIDGE]);
  if (!out.includes(`${BRIDGE_ADDRESS}/24`)) throw new Error(`bridge ${BRIDGE} lacks ${BRIDGE_ADDRESS}/24`);
}

export interface PodNetwork {
  /** `ip netns` name. */
  netns: string;
  ip: string;
}

/** Creates and removes pods' network namespaces; addresses come from the pod pool. */
export class PodNetworks {
  readonly pool = new AddressPool(POD_CIDR, 10, 254, [BRIDGE_ADDRESS]);
  private next = 0;
  private readonly byPod = new Map<string, PodNetwork & { hostLink: string }>();

  /** Gives the pod (by uid) its namespace, veth and address; idempotent per uid. */
  async create(uid: string): Promise<PodNetwork> {
    const have = this.byPod.get(uid);
    if (have) return have;
    const n = this.next++;
    const netns = `pod${n}`;
    const hostLink = `cvh${n}`;
    const addr = this.pool.allocate(uid);
    try {
      await ip(['netns', 'add', netns]);
      await ip(['link', 'add', hostLink, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
      await ip(['link', 'set', hostLink, 'master', BRIDGE, 'up']);
      await ip(['-n', netns, 'link', 'set', 'lo', 'up']);
      await ip(['-n', netns, 'addr', 'add', `${addr}/24`, 'dev', 'eth0']);
      await ip(['-n', netns, 'link', 'set', 'eth0', 'up']);
      await ip(['-n', netns, 'route', 'add', 'default', 'via', BRIDGE_ADDRESS]);
    } catch (err) {
      await ip(['netns', 'del', netns]).catch(() => undefined);
      this.pool.release(uid);
      throw err;
    }
    const pn = { netns, ip: addr, hostLink };
    this.byPod.set(uid, pn);
    return pn;
  }

  /** Deletes the pod's namespace (its veth goes with it) and frees its address. */
  async remove(uid: string): Promise<void> {
    const pn = this.byPod.get(uid);
    if (!pn) return;
    this.byPod.delete(uid);
    await ip(['netns', 'del', pn.netns]).catch(() => undefined);
    this.pool.release(uid);
  }
}
