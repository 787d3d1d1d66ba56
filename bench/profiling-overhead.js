'use strict';
// Benchmark 6: what profiling costs the host. Two host processes run the example controller's
// render loop (renderLoadBalancerConfig) in measured windows, one at a time: a host without the
// package (the baseline) and a host with the introspection router mounted with its defaults (warm
// CPU profiler, heap sampling), (a) while a CPU profile requested over HTTP (/debug/pprof/profile)
// runs and (b) idle, which is the always-on cost. Pairs alternate their order (AB, BA, ...) so drift cancels; the overhead
// is the median of the per-pair throughput losses, and ± is the 95 % confidence half-width of
// their mean: this loop's throughput varies ~10 % from window to window on a shared 2-core VM,
// so the resolution is printed next to the figure.

const { get200, main, median, report, row, startServer } = require('./common');

const CPU = { pairs: 12, windowMs: 800 }; // a profile lasts >= 1 s: its window fits inside one
const HEAP = { pairs: 40, windowMs: 250 }; // sampling switches in ms: many short pairs

/** Per-pair losses (1 - B/A), A and B alternating in order. */
async function pairs(count, runA, runB) {
  const losses = [];
  for (let i = 0; i < count; i++) {
    let a;
    let b;
    if (i % 2 === 0) {
      a = await runA();
      b = await runB();
    } else {
      b = await runB();
      a = await runA();
    }
    losses.push(1 - b / a);
  }
  return losses;
}

/** Median loss and the 95 % half-width of the mean, both as fractions. */
function summarise(losses) {
  const mean = losses.reduce((s, x) => s + x, 0) / losses.length;
  const sd = Math.sqrt(losses.reduce((s, x) => s + (x - mean) ** 2, 0) / (losses.length - 1));
  return { loss: median(losses), halfWidth: (1.96 * sd) / Math.sqrt(losses.length), losses };
}

async function run() {
  // The baseline is a host without the package (no router, so no warm profiler, no heap sampler,
  // no delay monitor); the other host mounts the router with its defaults, heap sampling on. Both
  // run the same loop in windows that alternate between the two processes, one at a time.
  const bare = await startServer({ mount: false });
  const ours = await startServer({});
  let cpu;
  let heap;
  try {
    const window = (server, ms) => async () => (await server.call('throughput', { ms })).perSec;
    const profiled = async () => {
      const profile = get200(ours.ports.debug, '/debug/pprof/profile?seconds=1');
      const { perSec, profiling } = await ours.call('throughput', { ms: CPU.windowMs, waitForProfile: true });
      if (!profiling) throw new Error('the CPU profile ended before the measuring window');
      await profile;
      return perSec;
    };
    for (const server of [bare, ours]) await window(server, 2000)(); // warm-up (JIT)
    await profiled();
    cpu = summarise(await pairs(CPU.pairs, window(bare, CPU.windowMs), profiled));
    heap = summarise(await pairs(HEAP.pairs, window(bare, HEAP.windowMs), window(ours, HEAP.windowMs)));
  } finally {
    await Promise.all([bare.close(), ours.close()]);
  }

  const pct = (x) => `${(x * 100).toFixed(1)} %`;
  // Met or not only when the noise cannot flip the answer.
  const judge = (s, target) => (s.loss + s.halfWidth <= target ? true : s.loss - s.halfWidth > target ? false : 'inconclusive');
  console.log(`[6] host throughput (renderLoadBalancerConfig): median loss over alternating pairs (± 95 % resolution)`);
  console.log(`  CPU profile: ${CPU.pairs} pairs of ${CPU.windowMs} ms; heap sampling: ${HEAP.pairs} pairs of ${HEAP.windowMs} ms`);
  const rows = [
    row(
      '6a',
      'host throughput during a CPU profile, vs. a host without the package: loss',
      `${pct(cpu.loss)} ± ${pct(cpu.halfWidth)}`,
      '≤ 5 %',
      judge(cpu, 0.05),
      {
        baseline: 'in-process',
      },
    ),
    row(
      '6b',
      'host throughput with the router mounted (heap sampling, warm profiler), vs. without: loss',
      `${pct(heap.loss)} ± ${pct(heap.halfWidth)}`,
      '≤ 2 %',
      judge(heap, 0.02),
      {
        baseline: 'in-process',
      },
    ),
  ];
  report(rows, { cpu, heap });
}

main(run);
