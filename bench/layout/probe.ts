/**
 * Checks that a listener layout matches SNI like the chains layout does, through a real Envoy:
 * exact names, a wildcard, an exact name the wildcard covers, unknown SNI and no SNI, with and
 * without a hostname-less listener. Prints one line per case; exits non-zero on a difference.
 */
import { hostnameOf } from '../world';
import { ControlPlane, request, startEnvoy, waitServed } from './plane';
import { LayoutPki, LayoutWorld, SHADOWED } from './world';
import { freePort } from '../../e2e/harness/ports';
import type { ListenerLayout } from '../../src/envoy/translate/sni-dispatch';

async function answers(layout: ListenerLayout, catchAll: boolean, sotw: boolean): Promise<string[]> {
  const world = new LayoutWorld(new LayoutPki(3));
  const port = await freePort();
  const cp = new ControlPlane(layout);
  cp.publish(world.model([0, 1, 2], { wildcard: true, catchAll }, port));
  await cp.listen();
  const envoy = await startEnvoy(cp, sotw, `probe-${layout}`);
  try {
    await waitServed(port, hostnameOf(0), 200, 60_000);
    const cases: [string, string | undefined][] = [
      ['exact', hostnameOf(1)],
      ['exact upper-case SNI', hostnameOf(2).toUpperCase()],
      ['wildcard', 'a.wild.example.com'],
      ['deep wildcard', 'a.b.wild.example.com'],
      ['shadowed exact', SHADOWED],
      ['unknown SNI', 'unknown.example.org'],
      ['no SNI', undefined],
    ];
    const out: string[] = [];
    for (const [what, sni] of cases) {
      const r = await request(port, sni, sni ?? 'nosni.example.org');
      out.push(`${what}: ${'error' in r ? `error ${r.error}` : `${r.status} ${r.body.trim()}`}`);
    }
    const stats = await envoy.stats('listener_manager');
    out.push(`listeners: ${stats.get('listener_manager.total_listeners_active')}`);
    return out;
  } catch (e) {
    console.error(envoy.logContext(20));
    throw e;
  } finally {
    await envoy.stop(1000);
    await cp.stop();
  }
}

async function main(): Promise<void> {
  let differ = false;
  for (const sotw of [false, true]) {
    for (const catchAll of [false, true]) {
      const a = await answers('chains', catchAll, sotw);
      const b = await answers('sni-dispatch', catchAll, sotw);
      console.log(
        `--- ${sotw ? 'SotW' : 'delta'}, ${catchAll ? 'with' : 'without'} a hostname-less listener`,
      );
      a.forEach((line, i) => {
        const same = line === b[i] || line.startsWith('listeners');
        if (!same) differ = true;
        console.log(`${same ? '  ' : '≠ '}chains: ${line}${same ? '' : `   sni-dispatch: ${b[i]}`}`);
      });
      console.log(`  sni-dispatch ${b[b.length - 1]}`);
    }
  }
  if (differ) process.exitCode = 1;
}

void main();
