'use strict';
// Benchmark 1: full `state` dump of a generated 50 MB state over HTTP. Total time (client-side,
// request to last byte) against JSON.stringify of the same object in the server process, and the
// longest event-loop stall in the server during the dump (monitorEventLoopDelay), while a
// /healthz prober runs alongside. A naive handler (one JSON.stringify, one write) is measured too,
// as context for what streaming avoids.

const { get200, main, median, ms, ratio, report, row, startProber, startServer } = require('./common');

const MB = 50;
const RUNS = 5;

/** One dump of `urlPath` with the stall monitor and the prober around it. */
async function dumpOnce(server, urlPath) {
  await server.call('monitorStart');
  const prober = startProber(server.ports.debug);
  const dump = await get200(server.ports.debug, urlPath);
  const probes = await prober.stop();
  const loop = await server.call('monitorStop');
  return { totalMs: dump.ms, bytes: dump.bytes, stallMs: loop.maxMs, probeMaxMs: Math.max(...probes.latencies) };
}

async function run() {
  const server = await startServer({}, ['--expose-gc']);
  try {
    await server.call('setState', { mb: MB });
    await get200(server.ports.debug, '/debug/vars/state'); // warm-up
    const baseline = await server.call('stringify', { reps: RUNS });
    const stringifyMs = median(baseline.times);

    const streamed = [];
    for (let i = 0; i < RUNS; i++) streamed.push(await dumpOnce(server, '/debug/vars/state'));
    const naive = [];
    for (let i = 0; i < 3; i++) naive.push(await dumpOnce(server, '/naive/state'));

    const totalMs = median(streamed.map((r) => r.totalMs));
    const stallMs = median(streamed.map((r) => r.stallMs));
    const worstStallMs = Math.max(...streamed.map((r) => r.stallMs));
    const naiveTotal = median(naive.map((r) => r.totalMs));
    const naiveStall = median(naive.map((r) => r.stallMs));
    const sizeMb = (baseline.bytes / 1e6).toFixed(1);

    console.log(`[1] state dump: ${sizeMb} MB state, ${RUNS} runs (medians); JSON.stringify in the server ${ms(stringifyMs, 0)}`);
    const rows = [
      row(
        '1a',
        `state dump ${sizeMb} MB: total / JSON.stringify`,
        `${ratio(totalMs / stringifyMs)} (${ms(totalMs, 0)} / ${ms(stringifyMs, 0)})`,
        '≤ 3×',
        totalMs / stringifyMs <= 3,
      ),
      row('1b', 'state dump: longest event-loop stall', `${ms(stallMs)} (worst of ${RUNS}: ${ms(worstStallMs)})`, '≤ 20 ms', stallMs <= 20),
      row('1c', 'context: naive res.end(JSON.stringify)', `${ms(naiveTotal, 0)} total, stall ${ms(naiveStall, 0)}`, '-', null),
    ];
    report(rows, { stringifyTimes: baseline.times, bytes: baseline.bytes, streamed, naive });
  } finally {
    await server.close();
  }
}

main(run);
