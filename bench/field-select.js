'use strict';
// Benchmark 2: `?field=` selection against the full dump, as the state grows 1 MB → 50 MB.
// Selection must walk only the path it needs, so its time must stay flat while the dump's grows.

const { get200, main, median, ms, report, row, startServer } = require('./common');

const SIZES_MB = [1, 5, 10, 25, 50];
const FIELD_REQUESTS = 200;
const DUMPS = 3;
// Flat: the 50 MB time within this factor of the 1 MB time. Each is taken relative to a /healthz
// round trip timed in the same turns, because both are loopback round trips of well under a
// millisecond, which other load on the machine moves by more than the selection costs.
const FLAT_FACTOR = 1.5;
const FLOOR = '/healthz';

const SELECTIONS = [
  { name: '{.version}', path: `/debug/vars/config?field=${encodeURIComponent('{.version}')}` },
  {
    name: '{.config.templates.haproxy\\.cfg}',
    label: '{…haproxy\\.cfg}',
    path: `/debug/vars/config?field=${encodeURIComponent('{.config.templates.haproxy\\.cfg}')}`,
  },
  { name: 'state {.config.version}', path: `/debug/vars/state?field=${encodeURIComponent('{.config.version}')}` },
];

async function medianOf(port, urlPath, count) {
  const times = [];
  for (let i = 0; i < count; i++) times.push((await get200(port, urlPath)).ms);
  return median(times);
}

/** Median time of each path, requested in turn so that drift hits all of them alike. */
async function mediansInTurn(port, paths, count) {
  const times = paths.map(() => []);
  for (let i = 0; i < count; i++) {
    for (let p = 0; p < paths.length; p++) times[p].push((await get200(port, paths[p])).ms);
  }
  return times.map(median);
}

async function run() {
  const server = await startServer({}, ['--expose-gc']);
  const paths = [FLOOR, ...SELECTIONS.map((s) => s.path)];
  const curve = [];
  try {
    for (const mb of SIZES_MB) {
      await server.call('setState', { mb });
      const port = server.ports.debug;
      await get200(port, '/debug/vars/state'); // warm-up, and the lazily built views
      // The first size also warms up the JIT (of both processes), which would otherwise make
      // the smallest state look slowest.
      await mediansInTurn(port, paths, mb === SIZES_MB[0] ? 500 : 20);
      const dumpMs = await medianOf(port, '/debug/vars/state', DUMPS);
      // The dumps' garbage would otherwise be collected while the selections are timed.
      await server.call('gc');
      const [floorMs, ...fields] = await mediansInTurn(port, paths, FIELD_REQUESTS);
      curve.push({ mb, dumpMs, floorMs, fields });
    }
  } finally {
    await server.close();
  }

  console.log(`[2] field selection vs full dump (medians of ${FIELD_REQUESTS} requests; dump: median of ${DUMPS})`);
  console.log(
    `  ${'state'.padEnd(8)}${'full dump'.padStart(12)}${FLOOR.padStart(12)}${SELECTIONS.map((s) => s.name.padStart(36)).join('')}`,
  );
  for (const c of curve) {
    const cells = c.fields.map((f) => `${ms(f, 3)} (${((f / c.dumpMs) * 100).toFixed(3)} %)`.padStart(36));
    console.log(`  ${`${c.mb} MB`.padEnd(8)}${ms(c.dumpMs, 0).padStart(12)}${ms(c.floorMs, 3).padStart(12)}${cells.join('')}`);
  }
  const first = curve[0];
  const last = curve[curve.length - 1];
  const rows = [];
  SELECTIONS.forEach((s, i) => {
    const share = last.fields[i] / last.dumpMs;
    const growth = last.fields[i] / last.floorMs / (first.fields[i] / first.floorMs);
    rows.push(
      row(
        `2${'abc'[i]}`,
        `${s.label || s.name} at 50 MB / full dump`,
        `${(share * 100).toFixed(3)} % (${ms(last.fields[i], 2)} / ${ms(last.dumpMs, 0)})`,
        '≤ 1 %',
        share <= 0.01,
        { baseline: 'HTTP' },
      ),
      row(
        `2${'abc'[i]}'`,
        `${s.label || s.name}: 50 MB / 1 MB, per /healthz (flat)`,
        `${growth.toFixed(2)}× (${first.fields[i].toFixed(2)} → ${ms(last.fields[i], 2)}; /healthz ${first.floorMs.toFixed(2)} → ${ms(last.floorMs, 2)})`,
        `≤ ${FLAT_FACTOR}×`,
        growth <= FLAT_FACTOR,
        { baseline: 'HTTP' },
      ),
    );
  });
  report(rows, {
    curve: curve.map((c) => ({
      mb: c.mb,
      dumpMs: c.dumpMs,
      healthzMs: c.floorMs,
      fieldsMs: Object.fromEntries(SELECTIONS.map((s, i) => [s.name, c.fields[i]])),
    })),
  });
}

main(run);
