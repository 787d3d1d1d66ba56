'use strict';
// Benchmark 11: the worst event-loop stall one hostile request can cause. The host holds a 20 MB
// state and a custom variable of 1 000 annotations of 10 KB; each request below is sent alone,
// three times, while the server's event loop is watched (monitorEventLoopDelay at 1 ms). Reported
// per request: the worst stall and the median of the three, beside the answer's status.

const { get, main, median, ms, report, row, startServer } = require('./common');

const RUNS = 3;
const GOAL_MS = 20;
const field = (name, template, extra = '') => `/debug/vars/${name}?field=${encodeURIComponent(template)}${extra}`;
const REQUESTS = [
  ['long-string filter (1 000 × 10 KB, each compared whole)', field('annotations', '{.items[?(@.annotation<@.annotation)].name}')],
  [
    'long-string filter, twice',
    field('annotations', '{.items[?(@.annotation<@.annotation)].name}{.items[?(@.annotation>=@.annotation)].name}'),
  ],
  ['output=text of a 12 MB subtree', field('config', '{.config.watched_resources}', '&output=text')],
  ['recursive descent {..} over the configuration', field('config', '{..generation}')],
  [
    'nested ranges at the step budget',
    field('config', '{range .config.watched_resources[*]}{range $.config.watched_resources[*]}x{end}{end}', '&output=text'),
  ],
  ['the whole 20 MB state', '/debug/vars/state'],
  ['the rendered configuration as text', field('rendered', '{.config}', '&output=text')],
];

async function run() {
  const server = await startServer({ pprof: false }, ['--expose-gc']);
  const results = [];
  try {
    await server.call('setState', { mb: 20 });
    await server.call('setAnnotations', { count: 1000, length: 10 * 1024 });
    for (const [name, path] of REQUESTS) {
      const stalls = [];
      let status;
      let bytes;
      for (let i = 0; i < RUNS; i++) {
        await server.call('gc');
        await server.call('monitorStart');
        const answer = await get(server.ports.debug, path);
        const loop = await server.call('monitorStop');
        stalls.push(loop.maxMs);
        status = answer.status;
        bytes = answer.bytes;
      }
      results.push({ name, status, bytes, worst: Math.max(...stalls), median: median(stalls) });
    }
  } finally {
    await server.close();
  }
  const worst = results.reduce((a, b) => (b.worst > a.worst ? b : a));
  console.log(`[11] worst event-loop stall from one hostile request, ${RUNS} runs each, 20 MB state`);
  const rows = results.map((r, i) =>
    row(
      `11${String.fromCharCode(97 + i)}`,
      `${r.name} (HTTP ${r.status}, ${(r.bytes / 1e6).toFixed(1)} MB)`,
      `worst ${ms(r.worst)}, median ${ms(r.median)}`,
      `≤ ${GOAL_MS} ms`,
      r.worst <= GOAL_MS,
    ),
  );
  rows.push(
    row('11', 'worst stall from one hostile request', `${ms(worst.worst)} (${worst.name})`, `≤ ${GOAL_MS} ms`, worst.worst <= GOAL_MS),
  );
  report(rows, { results });
}

main(run);
