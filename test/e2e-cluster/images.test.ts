import { test } from 'node:test';
import assert from 'node:assert/strict';
import { containerArgv, programForImage } from '../../e2e/cluster/images';

const bins = {
  echoBasic: '/c/echo-basic',
  dnsServer: '/c/dns-server',
  envoy: '/v/envoy',
  node: '/n/node',
  convoyMain: '/r/dist/src/cli/main.js',
};

test('the image table maps echo-basic (any tag or digest), every envoyproxy/envoy* image, Convoy and coredns', () => {
  assert.equal(
    programForImage('registry.k8s.io/gateway-api/echo-basic:v1.6.1', bins)?.binary,
    '/c/echo-basic',
  );
  assert.equal(
    programForImage('registry.k8s.io/gateway-api/echo-basic@sha256:abc', bins)?.kind,
    'echo-basic',
  );
  assert.equal(programForImage('envoyproxy/envoy:v1.40-latest', bins)?.binary, '/v/envoy');
  assert.equal(programForImage('docker.io/envoyproxy/envoy-distroless:v1.36.2', bins)?.kind, 'envoy');
  assert.equal(programForImage('ghcr.io/example/convoy:dev', bins)?.binary, '/n/node');
  assert.equal(programForImage('convoy:dev', bins)?.kind, 'convoy');
  assert.equal(programForImage('registry.k8s.io/coredns/coredns:v1.12.2', bins)?.kind, 'coredns');
  assert.equal(programForImage('nginx:1.27', bins), undefined);
  assert.equal(programForImage('registry.example:5000/envoyproxy/envoyish:1', bins), undefined);
  assert.equal(programForImage('example/not-envoyproxy/envoy:1', bins), undefined);
});

test('containerArgv follows command/args: an entrypoint command runs the table binary, any other command runs as given', () => {
  const envoy = programForImage('envoyproxy/envoy:v1', bins)!;
  assert.deepEqual(containerArgv(envoy, undefined, ['-c', '/etc/envoy/b.yaml']), [
    '/v/envoy',
    '-c',
    '/etc/envoy/b.yaml',
  ]);
  assert.deepEqual(containerArgv(envoy, ['envoy', '-l', 'info'], ['-c', 'x']), [
    '/v/envoy',
    '-l',
    'info',
    '-c',
    'x',
  ]);
  assert.deepEqual(containerArgv(envoy, ['/bin/sh', '-c', 'true'], undefined), ['/bin/sh', '-c', 'true']);
  const convoy = programForImage('convoy:dev', bins)!;
  assert.deepEqual(containerArgv(convoy, undefined, ['serve']), [
    '/n/node',
    '/r/dist/src/cli/main.js',
    'serve',
  ]);
  assert.deepEqual(containerArgv(convoy, ['convoy'], ['certgen']), [
    '/n/node',
    '/r/dist/src/cli/main.js',
    'certgen',
  ]);
  const dns = programForImage('registry.k8s.io/coredns/coredns:v1.12.2', bins)!;
  assert.deepEqual(containerArgv(dns, undefined, ['-conf', '/root/Corefile']), [
    '/c/dns-server',
    '-conf',
    '/root/Corefile',
  ]);
});
