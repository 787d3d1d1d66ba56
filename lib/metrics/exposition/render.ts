/**
 * Renders a prom-client registry in time slices: every metric's `collect()` is started in
 * registration order (as `registry.metrics()` starts them), all are awaited, then the families are
 * written one series per step, yielding to the event loop whenever the slice budget is used up.
 */
import { performance } from 'node:perf_hooks';
import { cooperativeTicker, nextTurn, startOfRun } from '../../util/cooperative';
import { callHost } from '../../util/host-promise';
import { dialectOf, type ExpositionFormat } from './dialect';
import type { ExemplarSource } from './exemplars';
import { writeHistogram, writePublic, writeScalar, writeSummary, type FamilyContext } from './families';
import { accessMetric, type MetricAccess, type PublicMetricData, type ReadableRegistry } from './internals';
import { defaultPairs } from './labels';
import { ChunkSink, type BlockConsumer, type RenderedBody } from './sink';

/** Longest stretch, in ms, the renderer runs before it yields (well under the 20 ms stall goal). */
export const DEFAULT_SLICE_MS = 5;

/**
 * Past this much of a run, the renderer yields before starting a family: a family whose series are
 * not indexed yet is listed in one step that cannot be split (V8 lists an object's keys in one go:
 * 23 ms for 100 000 keys here), so that step starts a turn of its own (see `series-index.ts`).
 */
const LISTING_HEADROOM_MS = 1;

/** Options of {@link renderRegistry}. */
export interface RenderOptions {
  /** The format to write. */
  readonly format: ExpositionFormat;
  /** Aborting it stops the rendering at its next step, rejecting with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Exemplars kept outside prom-client, written in OpenMetrics answers. */
  readonly exemplars?: ExemplarSource;
  /** Slice budget in ms. Default {@link DEFAULT_SLICE_MS}. */
  readonly sliceMs?: number;
  /** Where the encoded blocks go: kept, or compressed as they fill. */
  readonly consumer: BlockConsumer;
}

const ignore = (): void => undefined;

/**
 * Starts reading every metric: a storage-read metric's `collect()` is called (prom-client's own
 * `get()` awaits only a real Promise from it, so does this); a public metric's `get()` is called.
 * Every promise gets a handler at once, so a rejection is never reported as unhandled while the
 * others are still being started. The host's promises are waited on through `callHost`, so a
 * rendering abandoned by `signal` leaves nothing attached to a promise that never settles. Resolves
 * with the public metrics' data, by index.
 */
async function collectAll(
  accesses: readonly MetricAccess[],
  step: () => Promise<void> | undefined,
  signal: AbortSignal | undefined,
): Promise<Array<PublicMetricData | undefined>> {
  const pending: Array<Promise<unknown>> = [];
  const data: Array<Promise<PublicMetricData> | undefined> = [];
  for (const access of accesses) {
    let started: Promise<unknown> | undefined;
    if (access.kind === 'public') {
      const { metric } = access;
      const reading = callHost(() => (typeof metric.getForPromString === 'function' ? metric.getForPromString() : metric.get()), signal);
      data.push(reading);
      started = reading;
    } else {
      data.push(undefined);
      const { metric } = access;
      if (metric.collect) {
        started = callHost(() => {
          const result = metric.collect!();
          return result instanceof Promise ? result : undefined;
        }, signal);
      }
    }
    if (started !== undefined) {
      started.catch(ignore);
      pending.push(started);
    }
    const pause = step();
    if (pause !== undefined) await pause;
  }
  await Promise.all(pending);
  return Promise.all(data);
}

function writeFamily(context: FamilyContext, access: MetricAccess, data: PublicMetricData | undefined): Promise<void> {
  switch (access.kind) {
    case 'scalar':
      return writeScalar(context, access.metric);
    case 'histogram':
      return writeHistogram(context, access.metric);
    case 'summary':
      return writeSummary(context, access.metric);
    case 'public':
      return writePublic(context, access.metric, data!);
  }
}

/**
 * The exposition of `registry` in `options.format`, as UTF-8. Rejects with what a `collect()` or
 * `get()` threw or rejected with, or with the signal's reason once aborted.
 */
export async function renderRegistry(registry: ReadableRegistry, options: RenderOptions): Promise<RenderedBody> {
  const { signal, consumer } = options;
  // Aborting stops the rendering while it waits for its turn: no further slice runs for nobody.
  const step = cooperativeTicker(options.sliceMs ?? DEFAULT_SLICE_MS, 8, signal);
  try {
    const accesses = registry.metrics.map((metric) => {
      const access = accessMetric(metric);
      if (access === undefined) throw new TypeError(`the registry holds something that is not a metric: ${String(metric)}`);
      return access;
    });
    const data = await collectAll(accesses, step, signal);
    signal?.throwIfAborted();
    const context: FamilyContext = {
      sink: new ChunkSink(consumer),
      dialect: dialectOf(options.format),
      defaults: defaultPairs(registry.defaultLabels),
      exemplars: options.exemplars,
      step,
    };
    return await writeFamilies(context, accesses, data, signal);
  } catch (err) {
    consumer.abort();
    throw err;
  }
}

/** Writes every family, one series per step, each family's listing in a turn of its own when the current one is already used. */
async function writeFamilies(
  context: FamilyContext,
  accesses: readonly MetricAccess[],
  data: ReadonlyArray<PublicMetricData | undefined>,
  signal: AbortSignal | undefined,
): Promise<RenderedBody> {
  const { dialect, sink } = context;
  for (let i = 0; i < accesses.length; i += 1) {
    if (performance.now() - startOfRun() >= LISTING_HEADROOM_MS) await nextTurn({ budgetMs: LISTING_HEADROOM_MS, signal });
    if (i > 0) sink.put(dialect.familySeparator);
    await writeFamily(context, accesses[i]!, data[i]);
  }
  sink.put(dialect.end(accesses.length));
  return sink.finish();
}
