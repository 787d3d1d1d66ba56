'use strict';
// Benchmark 5: a /metrics scrape through the package's router (Express) against prom-client's own
// registry.metrics() behind bare node:http and against the peer express-prom-bundle, on one registry holding the 14 controller metric
// families and 1 000 extra labelled series. Requests alternate between the two servers so that
// drift (other load, CPU frequency) hits both alike. Uncompressed, so both produce the same bytes;
// the gzip scrape Prometheus actually makes is shown as context.

const { get200, main, median, ms, ratio, report, row, startServer } = require('./common');

const WARMUP = 300;
const REQUESTS = 1000;

async function run() {
  const server = await startServer({ metrics: true, pprof: false });
  const times = { ours: [], bare: [], express: [], bundle: [], gzip: [] };
  const bytes = {};
  try {
    const { metrics, bareMetrics, expressMetrics, bundleMetrics } = server.ports;
    const scrape = {
      ours: () => get200(metrics, '/metrics'),
      bare: () => get200(bareMetrics, '/metrics'),
      express: () => get200(expressMetrics, '/metrics'),
      bundle: () => get200(bundleMetrics, '/metrics'),
      gzip: () => get200(metrics, '/metrics', { 'Accept-Encoding': 'gzip' }),
    };
    for (let i = 0; i < WARMUP; i++) for (const name of Object.keys(scrape)) await scrape[name]();
    for (let i = 0; i < REQUESTS; i++) {
      // Alternate which goes first, so neither always follows the other.
      for (const name of i % 2 === 0 ? ['ours', 'bare', 'bundle', 'express', 'gzip'] : ['bundle', 'bare', 'ours', 'gzip', 'express']) {
        const r = await scrape[name]();
        times[name].push(r.ms);
        bytes[name] = r.bytes;
      }
    }
  } finally {
    await server.close();
  }
  // Same registry, so the same text, give or take a changing value (seconds as leader).
  if (Math.abs(bytes.ours - bytes.bare) > 64)
    throw new Error(`the two servers answered different bodies (${bytes.ours} vs ${bytes.bare} bytes)`);
  const ours = times.ours;
  const bare = times.bare;
  const gzip = times.gzip;
  const oursMs = median(ours);
  const bareMs = median(bare);
  const expressMs = median(times.express);
  const bundleMs = median(times.bundle);
  const worst = (name) => Math.max(...times[name]);
  const best = bundleMs < bareMs ? { name: 'express-prom-bundle', ms: bundleMs } : { name: 'bare prom-client', ms: bareMs };
  console.log(`[5] /metrics: ${REQUESTS} scrapes each, alternating (medians); exposition ${(bytes.ours / 1024).toFixed(0)} KiB`);
  const rows = [
    row(
      '5a',
      '/metrics via router / bare prom-client + node:http',
      `${ratio(oursMs / bareMs, 3)} (${ms(oursMs, 2)} / ${ms(bareMs, 2)})`,
      '≤ 1.05×',
      oursMs / bareMs <= 1.05,
      { baseline: 'HTTP' },
    ),
    row(
      '5e',
      '/metrics via router / the peer express-prom-bundle (same registry), median',
      `${ratio(oursMs / bundleMs, 3)} (${ms(oursMs, 2)} / ${ms(bundleMs, 2)}; worst ${ms(worst('ours'), 2)} / ${ms(worst('bundle'), 2)}); best peer: ${best.name}, ${ratio(oursMs / best.ms, 3)}`,
      '-',
      null,
      { baseline: 'HTTP' },
    ),
    row('5b', 'context: the same bare handler in Express / bare', `${ratio(expressMs / bareMs, 3)} (${ms(expressMs, 2)})`, '-', null),
    row('5c', 'context: router / the bare handler in Express', ratio(oursMs / expressMs, 3), '-', null),
    row('5d', 'context: /metrics gzip (what Prometheus asks for)', ms(median(gzip), 2), '-', null),
  ];
  report(rows, { oursMs, bareMs, expressMs, gzipMs: median(gzip), bytes: bytes.ours });
}

main(run);
