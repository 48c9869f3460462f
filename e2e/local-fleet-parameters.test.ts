import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConvoyProcess, freePorts, isListening, repoRoot, request, tempDir, waitFor } from './harness';

/**
 * Local Envoys with EnvoyFleet parameters, and the last-good hold (docs/operations.md §14 and
 * §23): `convoy serve --from-dir` reads the EnvoyFleet a Gateway names, so its real Envoy binds
 * the parameters' address (127.0.0.2, not the flag's 127.0.0.1), with their log level and drain
 * timeout, and the Gateway reports that address. An edit that makes the Gateway invalid (its
 * parametersRef names a missing EnvoyFleet) keeps the same Envoy serving the last good
 * configuration while the status says why; fixing it resumes updates; deleting it stops the Envoy.
 */

const BIND = '127.0.0.2';

function objectsYaml(webPort: number): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata:
  name: convoy
spec:
  controllerName: convoy.dev/gateway-controller
---
apiVersion: gateway.convoy.dev/v1alpha1
kind: EnvoyFleet
metadata:
  name: second-loopback
  namespace: default
spec:
  local:
    bindAddress: ${BIND}
  workload:
    logLevel: warning
    drainTimeout: 3s
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
spec:
  ports:
    - name: http
      port: 80
      targetPort: ${webPort}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-1
  namespace: default
  labels:
    kubernetes.io/service-name: web
addressType: IPv4
ports:
  - name: http
    port: ${webPort}
endpoints:
  - addresses: ['127.0.0.1']
    conditions: { ready: true }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: web
  namespace: default
spec:
  parentRefs:
    - name: edge
  rules:
    - backendRefs:
        - name: web
          port: 80
`;
}

/** Gateway default/edge naming EnvoyFleet `fleet`, with an HTTP listener per port. */
function gatewayYaml(fleet: string, ports: number[]): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: edge
  namespace: default
spec:
  gatewayClassName: convoy
  infrastructure:
    parametersRef:
      group: gateway.convoy.dev
      kind: EnvoyFleet
      name: ${fleet}
  listeners:
${ports.map((p) => `    - name: http-${p}\n      protocol: HTTP\n      port: ${p}`).join('\n')}
`;
}

/** Writes a file atomically (the file provider reads settled files). */
function writeFile(file: string, text: string): void {
  const staging = path.join(path.dirname(file), `.${path.basename(file)}.tmp`);
  fs.writeFileSync(staging, text);
  fs.renameSync(staging, file);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

type Condition = { type: string; status: string; reason: string; message: string };
type GatewayStatus = { conditions?: Condition[]; addresses?: { type: string; value: string }[] };

describe(
  'local Envoys take EnvoyFleet parameters and hold the last good configuration',
  { timeout: 600_000 },
  () => {
    const tmp = tempDir('local-fleet-parameters');
    const objects = path.join(tmp.dir, 'objects');
    const gatewayFile = path.join(objects, 'gateway.yaml');
    let convoy: ConvoyProcess;
    let backend: childProcess.ChildProcess;
    let listenerPort: number;
    let addedPort: number;
    const seenPids = new Set<number>();

    const envoyPid = (): number | undefined => {
      try {
        const file = path.join(convoy.workDir, 'state', 'convoy', 'envoys', 'default', 'edge', 'envoy.pid');
        const pid = Number(fs.readFileSync(file, 'utf8'));
        if (pid > 0) seenPids.add(pid);
        return pid > 0 && alive(pid) ? pid : undefined;
      } catch {
        return undefined;
      }
    };
    const served = async (port: number): Promise<boolean> => {
      try {
        const r = await request({ address: BIND, port, host: 'any.example.com' });
        return r.status === 200 && r.json<{ backend: string }>().backend === 'web';
      } catch {
        return false;
      }
    };
    const gatewayStatus = async (): Promise<GatewayStatus | undefined> => {
      const all =
        await convoy.getJson<{ kind: string; metadata: { name: string }; status?: GatewayStatus }[]>(
          '/status',
        );
      return all.find((o) => o.kind === 'Gateway' && o.metadata.name === 'edge')?.status;
    };
    const condition = (s: GatewayStatus | undefined, type: string) =>
      s?.conditions?.find((c) => c.type === type);
    const wait = <T>(what: string, f: () => Promise<T | undefined | false> | T | undefined | false) =>
      waitFor(f, { what, timeoutMs: 90_000, context: () => convoy.logContext() });

    before(async () => {
      const [web, http, added] = await freePorts(3);
      listenerPort = http!;
      addedPort = added!;
      fs.mkdirSync(objects);
      fs.writeFileSync(path.join(objects, 'objects.yaml'), objectsYaml(web!));
      fs.writeFileSync(gatewayFile, gatewayYaml('second-loopback', [listenerPort]));
      backend = childProcess.spawn(
        process.execPath,
        [
          path.join(repoRoot(), 'examples', 'backend', 'server.js'),
          '--name',
          'web',
          '--port',
          String(web),
          '--host',
          '127.0.0.1',
        ],
        { stdio: 'ignore' },
      );
      convoy = await ConvoyProcess.start({
        args: [
          '--from-dir',
          objects,
          '--envoy-bind-address',
          '127.0.0.1',
          '--envoy-drain-time',
          '1s',
          '--from-dir-settle-ms',
          '50',
        ],
        managedEnvoys: true,
        ...(process.env.CONVOY_ENVOY_BIN ? { env: { ENVOY_BIN: process.env.CONVOY_ENVOY_BIN } } : {}),
      });
    });

    after(async () => {
      await convoy?.stop('SIGKILL');
      for (const pid of seenPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
      backend?.kill();
      tmp.cleanup();
    });

    test("the Envoy binds the parameters' address with their log level and drain timeout, and the Gateway reports it", async () => {
      await wait(`traffic at ${BIND}`, () => served(listenerPort));
      assert.equal(await isListening(listenerPort, '127.0.0.1'), false, "not on the flag's address");
      const status = await gatewayStatus();
      assert.deepEqual(status?.addresses, [{ type: 'IPAddress', value: BIND }]);
      assert.equal(condition(status, 'Programmed')?.status, 'True');
      const pid = envoyPid();
      assert.ok(pid, 'the Envoy of default/edge runs');
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      assert.equal(args[args.indexOf('--drain-time-s') + 1], '3');
      assert.equal(args[args.indexOf('--log-level') + 1], 'warning');
    });

    test('an invalid edit keeps the same Envoy serving; the status says why; a fix resumes updates', async () => {
      const pid = envoyPid()!;
      writeFile(gatewayFile, gatewayYaml('missing', [listenerPort, addedPort]));
      const held = await wait('the Gateway to be held', async () => {
        const s = await gatewayStatus();
        return condition(s, 'convoy.dev/ServingLastGoodConfiguration')?.status === 'True' ? s : undefined;
      });
      const accepted = condition(held, 'Accepted');
      assert.equal(accepted?.status, 'False');
      assert.equal(accepted?.reason, 'InvalidParameters');
      assert.match(accepted?.message ?? '', /missing/);
      assert.match(condition(held, 'convoy.dev/ServingLastGoodConfiguration')?.message ?? '', /generation/);
      assert.deepEqual(held.addresses, [{ type: 'IPAddress', value: BIND }]);
      for (let i = 0; i < 20; i++) assert.ok(await served(listenerPort), `request ${i} while held`);
      assert.equal(await isListening(addedPort, BIND), false, "the invalid edit's listener is not opened");
      assert.equal(envoyPid(), pid, 'the same Envoy');

      writeFile(gatewayFile, gatewayYaml('second-loopback', [listenerPort, addedPort]));
      await wait('the fixed Gateway’s new listener to serve', () => served(addedPort));
      const fixed = await gatewayStatus();
      assert.equal(condition(fixed, 'Accepted')?.status, 'True');
      assert.equal(condition(fixed, 'convoy.dev/ServingLastGoodConfiguration'), undefined);
      assert.ok(await served(listenerPort));
      assert.equal(envoyPid(), pid, 'still the same Envoy');
    });

    test('deleting the Gateway stops its Envoy', async () => {
      const pid = envoyPid()!;
      fs.rmSync(gatewayFile);
      await wait('the Envoy of the deleted Gateway to stop', () => !alive(pid));
      assert.equal(await isListening(listenerPort, BIND), false);
    });
  },
);
