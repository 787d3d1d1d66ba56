import express from 'express';
import { createPprofRouter } from '../../lib/pprof';
import { createPipeline, createWorkQueue } from '../../lib/pipeline';
import { createIntrospectionState } from '../../lib/state/store';
import { listen } from '../helpers/http';
import { decodePprof, stringAt } from './helpers';

/** Burns `ms` of CPU in a function the profile names. */
function burnForCycle(ms: number): number {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x += 1;
  return x;
}

/**
 * A real CPU profile of 4 concurrent workers whose cycles interleave (each: CPU, a timer, CPU, a
 * continuation, CPU): the cycles overlap all the time, so only the segments the state notes while
 * the profile records can place their samples.
 */
describe('CPU samples of concurrent cycles', () => {
  it('are placed by the segments of each cycle', async () => {
    const state = createIntrospectionState();
    const pipeline = createPipeline(state);
    const router = createPprofRouter(state, { cpuSamplingIntervalMicros: 2000 });
    const app = express();
    app.use('/debug/pprof', router);
    const served = await listen(app);
    const queue = createWorkQueue({ name: 'concurrent' });
    const ids = new Set<string>();
    const processing = pipeline.processQueue(queue, {
      workers: 4,
      requeueAfterMs: 20,
      cycle: () => ({
        trigger: 'resync',
        render: async () => {
          burnForCycle(1);
          await new Promise((resolve) => setTimeout(resolve, 1));
          burnForCycle(1);
          await Promise.resolve();
          burnForCycle(1);
          return 'config';
        },
      }),
    });
    const unsubscribe = state.subscribe((event) => {
      if (event.correlation_id) ids.add(event.correlation_id);
    });
    for (const key of ['a', 'b', 'c', 'd']) queue.add(key);
    try {
      const response = await fetch(`${served.origin}/debug/pprof/profile?seconds=2`);
      expect(response.status).toBe(200);
      const profile = decodePprof(Buffer.from(await response.arrayBuffer()));
      const comment = profile.comment.map((c) => stringAt(profile, c)).join('\n');
      const placed = /labelled by reconciliation cycle \((\d+) placed by the segments/.exec(comment);
      expect(Number(placed?.[1])).toBeGreaterThan(0);

      // Of the samples in the cycles' own code, most carry a cycle the events know.
      let burning = 0;
      let labelled = 0;
      const burnIds = new Set(
        profile.location
          .filter((l) =>
            l.line.some((line) => stringAt(profile, profile.function[Number(line.functionId) - 1]?.name ?? 0) === 'burnForCycle'),
          )
          .map((l) => Number(l.id)),
      );
      for (const sample of profile.sample) {
        if (!burnIds.has(Number(sample.locationId[0]))) continue;
        const count = Number(sample.value[0]);
        burning += count;
        const labels = Object.fromEntries(sample.label.map((l) => [stringAt(profile, l.key), stringAt(profile, l.str)]));
        if (labels['correlation_id'] !== undefined) {
          expect(ids).toContain(labels['correlation_id']);
          expect(labels['trigger']).toBe('resync');
          labelled += count;
        }
      }
      expect(burning).toBeGreaterThan(50);
      expect(labelled / burning).toBeGreaterThan(0.8);
    } finally {
      unsubscribe();
      await processing.close();
      await router.close();
      await served.close();
    }
  }, 60_000);
});
