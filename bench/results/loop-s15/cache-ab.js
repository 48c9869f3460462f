// Paired A/B of XdsCache.setFleet in one process: record the Controller's setFleet calls during
// changes at a size, then replay each call into a base cache and a branch cache, alternating which
// goes first, timing each. Usage: node cache-ab.js BRANCH_DIR BASE_DIR SIZE CHANGES_PER_KIND
const [branchDir, baseDir, sizeName, perKind, branchCopyDir] = process.argv.slice(2);
const path = require('path');
const B = (p) => require(path.join(branchDir, 'dist', p));
const A = (p) => require(path.join(baseDir, 'dist', p));
const { World, SIZES } = B('bench/world.js');
const { ObjectStore } = B('src/store/store.js');
const { Controller } = B('src/controller/controller.js');
const { ConvoyMetrics } = B('src/observability/metrics.js');
const { silentLogger } = B('src/observability/logger.js');
const run = B('bench/run.js');
const CacheB = B('src/xds/cache.js').XdsCache;
// The replayed branch cache comes from a copy of the branch build: fresh module instances, cold
// like the base's (the recording warmed the branch modules' per-chain byte caches).
const CacheB2 = require(path.join(branchCopyDir, 'dist', 'src/xds/cache.js')).XdsCache;
const MetricsB2 = require(path.join(branchCopyDir, 'dist', 'src/observability/metrics.js')).ConvoyMetrics;
const CacheA = A('src/xds/cache.js').XdsCache;
(async () => {
  const world = new World({ size: SIZES[sizeName] });
  const store = new ObjectStore();
  world.load(store);
  const metrics = new ConvoyMetrics();
  const cache = new CacheB({ logger: silentLogger(), metrics });
  const calls = [];
  let kind = 'first';
  const orig = cache.setFleet.bind(cache);
  cache.setFleet = (fleet, res) => {
    calls.push({ kind, fleet, res: { listeners: [...res.listeners], routes: [...res.routes], clusters: [...res.clusters], endpoints: [...res.endpoints], secrets: [...res.secrets] } });
    return orig(fleet, res);
  };
  const server = { world, store, cache, metrics, statuses: [], memo: new (B('src/gateway/build-memo.js').BuildMemo)() };
  const controller = new Controller({ store, cache, statusSinks: [], logger: silentLogger(), metrics, controllerName: 'convoy.dev/gateway-controller', translate: { bindAddress: '127.0.0.1' }, memo: server.memo, debounceMs: 0, maxDelayMs: 0 });
  server.controller = controller;
  controller.start();
  await run.waitIdle(server);
  for (let i = 0; i < Number(perKind); i++) {
    for (const k of run.CHANGE_KINDS) {
      kind = k;
      await run.applyChange(server, run.nextChange(world, k, server));
      await run.waitIdle(server);
    }
  }
  controller.stop?.();
  console.error(`recorded ${calls.length} setFleet calls`);
  const a = new CacheA({ logger: silentLogger(), metrics: new (A('src/observability/metrics.js').ConvoyMetrics)() });
  const b = new CacheB2({ logger: silentLogger(), metrics: new MetricsB2() });
  const times = {};
  const { performance } = require('perf_hooks');
  let mismatches = 0;
  calls.forEach((c, i) => {
    const order = i % 2 === 0 ? [['base', a], ['branch', b]] : [['branch', b], ['base', a]];
    for (const [side, cache] of order) {
      const t0 = performance.now();
      const r = cache.setFleet(c.fleet, c.res);
      const t = performance.now() - t0;
      if (!r.ok) throw new Error(side + ' refused ' + r.errors.slice(0, 3));
      ((times[c.kind] ??= { base: [], branch: [] })[side]).push(t);
    }
    const sa = a.snapshot(c.fleet), sb = b.snapshot(c.fleet);
    for (const t of Object.keys(sa.types)) {
      if (sa.types[t].version !== sb.types[t].version) mismatches++;
    }
  });
  const med = (xs) => { const s = [...xs].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
  const out = { size: sizeName, calls: calls.length, mismatchedTypeVersions: mismatches, kinds: {} };
  for (const [k, v] of Object.entries(times)) {
    out.kinds[k] = { n: v.base.length, baseMedianMs: +med(v.base).toFixed(3), branchMedianMs: +med(v.branch).toFixed(3), baseMs: v.base.map((x) => +x.toFixed(2)), branchMs: v.branch.map((x) => +x.toFixed(2)) };
    console.error(`${k.padEnd(12)} n=${v.base.length} setFleet median base ${med(v.base).toFixed(2)} ms, branch ${med(v.branch).toFixed(2)} ms`);
  }
  console.log(JSON.stringify(out));
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
