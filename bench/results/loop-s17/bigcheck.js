// A 5,000-chain Listener re-encoded against its previous encoding (a chain inserted, one removed),
// compared byte for byte with protobufjs. Run from this directory after npm run build:
//   node bigcheck.js
const { translateListener } = require('../../../dist/src/envoy/translate/listeners');
const { encodeMessage } = require('../../../dist/src/envoy/protos');
const { encodeListener, listenerVersion } = require('../../../dist/src/xds/listener-bytes');
const chain = (i) => ({ name: `ListenerSet/ns/ls-${i}/https`, serverNames: [`svc-${i}.example.com`], mode: 'Terminate', protocol: 'HTTPS', secretNames: [`ns/cert-${i}`], routeConfigName: `https-8443/svc-${i}.example.com`, virtualHosts: [] });
const port = (chains) => ({ name: 'https-8443', port: 8443, filterChains: chains });
let models = Array.from({ length: 5000 }, (_, i) => chain(i));
let l = translateListener(port(models), { bindAddress: '0.0.0.0' });
let prev = encodeListener(l).bytes;
let ok = true;
for (const step of [0, 1, 2]) {
  if (step === 1) models = [...models.slice(0, 2500), chain(9000), ...models.slice(2500)];
  if (step === 2) models = models.filter((_, i) => i !== 100);
  const nl = translateListener(port(models), { bindAddress: '0.0.0.0' });
  const shared = nl.filter_chains.filter((c, i) => l.filter_chains.includes(c)).length;
  const t0 = process.hrtime.bigint();
  const got = encodeListener(nl, prev);
  const t1 = process.hrtime.bigint();
  const want = encodeMessage('envoy.config.listener.v3.Listener', nl);
  const eq = Buffer.compare(got.bytes, want) === 0 && got.version === listenerVersion(want);
  ok = ok && eq;
  console.log(`step ${step}: ${got.bytes.length} bytes, chains shared by identity ${shared}/${nl.filter_chains.length}, equal ${eq}, ${Number(t1 - t0) / 1e6} ms`);
  prev = got.bytes; l = nl;
}
process.exit(ok ? 0 : 1);
