'use strict';
// Benchmark 1: the `state` dump at 1, 10, 50 and 200 MB, side by side with its peers in the same
// server process, all over HTTP from the same client after a full collection: the package's
// /debug/vars/state, Express's res.json (one JSON.stringify, one write) and json-stream-stringify
// (a streaming serializer). Reported per size: total time (request to last byte) and the server's
// longest event-loop stall (monitorEventLoopDelay), worst of all runs beside the median. At 50 and
// 200 MB also the serializer alone in-process, into a sink that discards its input, against
// JSON.stringify of the same object, with its longest slice.
//
// Goals: where a one-shot answer stays within the 20 ms stall goal (res.json's worst stall here),
// total time ≤ 1.1× res.json; elsewhere the stall ≤ 10 ms. At 50 and 200 MB: ≤ 1.5× res.json over
// HTTP, ≤ 1.2× JSON.stringify in-process, longest slice ≤ 10 ms.

const { get200, main, median, ms, ratio, report, row, startServer } = require('./common');

const SIZES = (process.env.BENCH_DUMP_SIZES || '1,10,50,200').split(',').map(Number);
const STALL_GOAL_MS = 20;
const PEERS = [
  { name: 'res.json', path: '/peer/res-json/state' },
  { name: 'json-stream-stringify', path: '/peer/json-stream-stringify/state' },
];
const OURS = { name: 'ours', path: '/debug/vars/state' };

function runsFor(mb) {
  return mb >= 200 ? 3 : mb >= 50 ? 5 : 9;
}

/** One request after a full collection, with the server's event loop watched. */
async function dumpOnce(server, urlPath) {
  await server.call('gc');
  await server.call('monitorStart');
  const dump = await get200(server.ports.debug, urlPath);
  const loop = await server.call('monitorStop');
  return { totalMs: dump.ms, bytes: dump.bytes, stallMs: loop.maxMs };
}

function summary(runs) {
  const totals = runs.map((r) => r.totalMs);
  const stalls = runs.map((r) => r.stallMs);
  return {
    total: median(totals),
    worstTotal: Math.max(...totals),
    stall: median(stalls),
    worstStall: Math.max(...stalls),
    bytes: runs[0].bytes,
  };
}

const fmt = (s) => `${ms(s.total, 1)} (worst ${ms(s.worstTotal, 1)}), stall ${ms(s.worstStall)} worst, ${ms(s.stall)} median`;

async function measureSize(server, mb) {
  await server.call('setState', { mb });
  const methods = [OURS, ...PEERS];
  // A first request of each, not counted: code paths compiled, caches warm, as in a running host.
  for (const m of methods) await get200(server.ports.debug, m.path);
  const runs = Object.fromEntries(methods.map((m) => [m.name, []]));
  const count = runsFor(mb);
  for (let i = 0; i < count; i++) {
    for (const m of methods) {
      // The streaming peer is an order of magnitude slower; two runs say enough at 200 MB.
      if (m.name === 'json-stream-stringify' && mb >= 200 && i >= 2) continue;
      runs[m.name].push(await dumpOnce(server, m.path));
    }
  }
  const stats = Object.fromEntries(Object.entries(runs).map(([name, r]) => [name, summary(r)]));
  const ours = stats.ours;
  const resJson = stats['res.json'];
  const best = PEERS.map((p) => ({ name: p.name, ...stats[p.name] })).sort((a, b) => a.total - b.total)[0];
  const sizeMb = (ours.bytes / 1e6).toFixed(1);
  const oneShotFits = resJson.worstStall <= STALL_GOAL_MS;
  const rows = [
    row(
      `1.${mb}`,
      `${sizeMb} MB dump over HTTP: ours / best peer (${best.name}), median total`,
      `${ratio(ours.total / best.total)} (${ms(ours.total, 1)} / ${ms(best.total, 1)}; worst ${ms(ours.worstTotal, 1)} / ${ms(best.worstTotal, 1)})`,
      oneShotFits ? '≤ 1.1× res.json' : 'context',
      oneShotFits ? ours.total <= 1.1 * resJson.total : null,
      { baseline: 'HTTP' },
    ),
    row(
      `1.${mb}s`,
      `${sizeMb} MB dump: longest event-loop stall, worst (median) — ours; res.json; json-stream-stringify`,
      `${ms(ours.worstStall)} (${ms(ours.stall)}); ${ms(resJson.worstStall)} (${ms(resJson.stall)}); ${ms(stats['json-stream-stringify'].worstStall)} (${ms(stats['json-stream-stringify'].stall)})`,
      oneShotFits ? `≤ ${STALL_GOAL_MS} ms` : '≤ 10 ms',
      ours.worstStall <= (oneShotFits ? STALL_GOAL_MS : 10),
      { baseline: 'HTTP' },
    ),
  ];
  if (mb >= 50) {
    rows.push(
      row(
        `1.${mb}h`,
        `${sizeMb} MB dump over HTTP / res.json, median (worst of ours / best of res.json)`,
        `${ratio(ours.total / resJson.total)} (${ratio(ours.worstTotal / Math.min(...runs['res.json'].map((r) => r.totalMs)))})`,
        '≤ 1.5×',
        ours.total <= 1.5 * resJson.total,
        { baseline: 'HTTP' },
      ),
    );
    const sink = await server.call('nullSink', { reps: runsFor(mb) });
    const nullRatio = median(sink.streamed) / median(sink.stringify);
    rows.push(
      row(
        `1.${mb}n`,
        `${sizeMb} MB serializer into a null sink / JSON.stringify, median (worst / best)`,
        `${ratio(nullRatio)} (${ratio(Math.max(...sink.streamed) / Math.min(...sink.stringify))}; ${ms(median(sink.streamed), 0)} / ${ms(median(sink.stringify), 0)})`,
        '≤ 1.2×',
        nullRatio <= 1.2,
        { baseline: 'in-process' },
      ),
      row(
        `1.${mb}l`,
        `${sizeMb} MB serializer: longest slice, worst (median)`,
        `${ms(Math.max(...sink.slices))} (${ms(median(sink.slices))})`,
        '≤ 10 ms',
        Math.max(...sink.slices) <= 10,
        { baseline: 'in-process' },
      ),
    );
    runs.nullSink = sink;
  }
  for (const [name, s] of Object.entries(stats)) console.log(`  ${sizeMb} MB ${name.padEnd(22)} ${fmt(s)}`);
  return { rows, runs };
}

async function run() {
  // 200 MB of JSON is about 1.5 GB of objects, and res.json holds the text twice more.
  const server = await startServer({}, ['--expose-gc', '--max-old-space-size=8192']);
  try {
    const rows = [];
    const details = {};
    for (const mb of SIZES) {
      const result = await measureSize(server, mb);
      rows.push(...result.rows);
      details[`${mb}MB`] = result.runs;
    }
    console.log('[1] state dump, ours and its peers over HTTP after a full collection each (medians; worst beside)');
    report(rows, details);
  } finally {
    await server.close();
  }
}

main(run);
