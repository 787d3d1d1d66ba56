'use strict';
// Benchmark 3: /healthz latency (p50/p99, seen by a client) while the 50 MB state is dumped back
// to back and a CPU profile is recorded, against the same prober on the idle server.

const { get200, main, median, ms, percentile, ratio, report, row, sleep, startProber, startServer } = require('./common');

const MB = 50;
const RUNS = 3;
const PROFILE_SECONDS = 4;

function summarise(latencies) {
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies), count: latencies.length };
}

/** One loaded run: a CPU profile, dumps until it is done, the prober all along. */
async function loadedRun(server) {
  const port = server.ports.debug;
  await server.call('monitorStart');
  const prober = startProber(port);
  let profiling = true;
  const profile = get200(port, `/debug/pprof/profile?seconds=${PROFILE_SECONDS}`).finally(() => {
    profiling = false;
  });
  let dumps = 0;
  while (profiling) {
    await get200(port, '/debug/vars/state');
    dumps++;
  }
  const profileBytes = (await profile).bytes;
  const probes = await prober.stop();
  const loop = await server.call('monitorStop');
  return { ...summarise(probes.latencies), failures: probes.failures, dumps, profileBytes, stallMs: loop.maxMs };
}

async function run() {
  const server = await startServer({}, ['--expose-gc']);
  let idle;
  const loaded = [];
  try {
    await server.call('setState', { mb: MB });
    await get200(server.ports.debug, '/debug/vars/state');
    const warm = startProber(server.ports.debug);
    await sleep(1000);
    await warm.stop();

    const idleProber = startProber(server.ports.debug);
    await sleep(3000);
    idle = summarise((await idleProber.stop()).latencies);
    for (let i = 0; i < RUNS; i++) loaded.push(await loadedRun(server));
  } finally {
    await server.close();
  }

  const p50 = median(loaded.map((r) => r.p50));
  const p99 = median(loaded.map((r) => r.p99));
  const worst = Math.max(...loaded.map((r) => r.max));
  const failures = loaded.reduce((n, r) => n + r.failures, 0);
  console.log(
    `[3] /healthz under a ${MB} MB dump loop + ${PROFILE_SECONDS} s CPU profile, ${RUNS} runs ` +
      `(${loaded.map((r) => `${r.count} probes, ${r.dumps} dumps`).join('; ')}); idle: ${idle.count} probes`,
  );
  const rows = [
    row(
      '3a',
      '/healthz p99 during dump + CPU profile',
      `${ms(p99)} (idle ${ms(idle.p99, 2)}, ${ratio(p99 / idle.p99, 1)})`,
      '≤ 20 ms',
      p99 <= 20 && failures === 0,
    ),
    row('3b', '/healthz p50 during dump + CPU profile', `${ms(p50, 2)} (idle ${ms(idle.p50, 2)}, ${ratio(p50 / idle.p50, 1)})`, '-', null),
    row('3c', '/healthz worst / server longest stall', `${ms(worst)} / ${ms(Math.max(...loaded.map((r) => r.stallMs)))}`, '-', null),
  ];
  report(rows, { idle, loaded });
}

main(run);
