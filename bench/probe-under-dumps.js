'use strict';
// Benchmark 12: /healthz latency while 200 clients dump a 20 MB state at once (the work limiter
// lets a few run and queues the rest, answering 503 beyond the queue), against the same prober
// on the idle server measured in the same run. Reported: p50, p99 and worst probe latency.

const http = require('node:http');
const { get, main, ms, percentile, report, row, sleep, startProber, startServer } = require('./common');

const CONCURRENT = 200;
const GOAL_MS = 20;

function summarise(latencies) {
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies), count: latencies.length };
}

async function run() {
  const server = await startServer({ pprof: false }, ['--expose-gc']);
  // Every dump on its own connection, all at once.
  const wide = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  let idle;
  let loaded;
  let statuses;
  let stall;
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
      '12c',
      'dump answers',
      Object.entries(statuses)
        .map(([s, n]) => `${n}× ${s}`)
        .join(', '),
      '-',
      null,
    ),
  ];
  report(rows, { idle, loaded, statuses, stall });
}

main(run);
