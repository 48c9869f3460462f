const { blockedVersion, patchedVersion } = require('../../../dist/src/xds/set-version.js');
const { setVersion, TypeSnapshot } = require('../../../dist/src/xds/snapshot.js');
const { createHash } = require('crypto');
for (const n of [5000, 20000, 40000]) {
  const m = new Map();
  for (let i = 0; i < n; i++) { const name = `ns-${i%97}/listenerset-${i}-https`; m.set(name, { name, version: createHash('sha256').update(name).digest('base64url').slice(0,22), bytes: Buffer.alloc(1) }); }
  let ts = new TypeSnapshot('t', m);
  const t = (f, k=20) => { const s=process.hrtime.bigint(); for (let i=0;i<k;i++) f(); return Number(process.hrtime.bigint()-s)/1e6/k; };
  const full = t(() => setVersion(ts.sorted));
  const blocked = t(() => blockedVersion(ts.sorted));
  let i = 0;
  const rep = t(() => { const name = ts.sorted[(i++ * 7919) % n].name; const e = { name, version: 'x' + i, bytes: Buffer.alloc(1) }; const entries = new Map(ts.entries); entries.set(name, e); ts = TypeSnapshot.replace(ts, entries, [e]); }, 20);
  const mapCopy = t(() => new Map(ts.entries), 20);
  console.log(n, 'old setVersion', full.toFixed(2), 'ms; blocked full', blocked.toFixed(2), 'ms; replace one (incl. a Map copy of', mapCopy.toFixed(2), 'ms)', rep.toFixed(2), 'ms');
}
