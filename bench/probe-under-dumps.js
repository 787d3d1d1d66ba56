'use strict';
// Benchmark 12: /healthz latency while 200 clients dump a 20 MB state at once (the work limiter
// lets a few run and queues the rest, answering 503 beyond the queue), against the same prober
// on the idle server measured in the same run. Reported: p50, p99 and worst probe latency, and the
// server's worst event-loop stall beside a baseline: the same burst of 200 connections sent to
// /livez, which costs almost nothing per request, so what remains is the burst itself (Node
// accepts, parses and routes every ready connection in one turn of the loop).

const http = require('node:http');
const { get, main, ms, percentile, report, row, sleep, startProber, startServer } = require('./common');

const CONCURRENT = 200;
const GOAL_MS = 20;

function summarise(latencies) {
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies), count: latencies.length };
}

async function run() {
  const server = await startServer({ pprof: false }, ['--expose-gc', ...(process.env.BENCH_TRACE_GC ? ['--trace-gc'] : [])]);
  // Every dump on its own connection, all at once.
  const wide = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  let idle;
  let loaded;
  let statuses;
  let stall;
  let burstStall;
  try {
    await server.call('setState', { mb: 20 });
    await get(server.ports.debug, '/debug/vars/state');
    const idleProber = startProber(server.ports.debug);
    await sleep(3000);
    idle = summarise((await idleProber.stop()).latencies);

    await server.call('monitorStart');
    const prober = startProber(server.ports.debug);
    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, () =>
        get(server.ports.debug, '/debug/vars/state', {}, wide).catch((err) => ({ status: err.code })),
      ),
    );
    const probes = await prober.stop();
    stall = (await server.call('monitorStop')).maxMs;
    loaded = { ...summarise(probes.latencies), failures: probes.failures };
    statuses = {};
    for (const a of answers) statuses[a.status] = (statuses[a.status] || 0) + 1;

    await server.call('gc');
    await server.call('monitorStart');
    await Promise.all(Array.from({ length: CONCURRENT }, () => get(server.ports.debug, '/livez', {}, wide).catch(() => undefined)));
    burstStall = (await server.call('monitorStop')).maxMs;
  } finally {
    wide.destroy();
    await server.close();
  }
  console.log(
    `[12] /healthz under ${CONCURRENT} concurrent 20 MB dumps: ${loaded.count} probes (${loaded.failures} failed); dump answers ${JSON.stringify(statuses)}; idle: ${idle.count} probes`,
  );
  const rows = [
    row(
      '12a',
      `/healthz p99 under ${CONCURRENT} concurrent 20 MB dumps`,
      `p99 ${ms(loaded.p99)}, p50 ${ms(loaded.p50)}, worst ${ms(loaded.max)}; idle p99 ${ms(idle.p99)} (${(loaded.p99 / idle.p99).toFixed(1)}×)`,
      `≤ ${GOAL_MS} ms`,
      loaded.p99 <= GOAL_MS,
    ),
    row('12b', 'server event-loop stall meanwhile', `worst ${ms(stall)}`, `≤ ${GOAL_MS} ms`, stall <= GOAL_MS),
    row(
      "12b'",
      `baseline: the same burst of ${CONCURRENT} connections to /livez`,
      `worst ${ms(burstStall)} (dumps / baseline ${(stall / burstStall).toFixed(2)}×)`,
      '-',
      null,
    ),
    row(
      '12c',
      'dump answers',
      Object.entries(statuses)
        .map(([s, n]) => `${n}× ${s}`)
        .join(', '),
      '-',
      null,
    ),
  ];
  report(rows, { idle, loaded, statuses, stall, burstStall });
}

main(run);
