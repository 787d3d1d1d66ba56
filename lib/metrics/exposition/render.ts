/**
 * Renders a registry in time slices, in text, OpenMetrics or protobuf: every metric's `collect()` is started in
 * registration order (as `registry.metrics()` starts them), all are awaited, then the families are
 * written one series per step, yielding to the event loop whenever the slice budget is used up.
 */
import { performance } from 'node:perf_hooks';
import { cooperativeTicker, nextTurn, startOfRun } from '../../util/cooperative';
import { cutText } from '../../util/cut-text';
import { callHost } from '../../util/host-promise';
import { dialectOf, hostText, type ExpositionFormat } from './dialect';
import type { ExemplarSource } from './exemplars';
import { writeHistogram, writePublic, writeScalar } from './families';
import { protoDefaults, writeHistogramProto, writePublicProto, writeScalarProto, type ProtoContext } from './protobuf-families';
import {
  accessMetric,
  type HistogramSeries,
  type MetricAccess,
  type PublicMetricData,
  type ReadableRegistry,
  type ScalarSeries,
} from './internals';
import { readOnce } from './in-flight';
import { defaultPairs } from './labels';
import type { NameWriter } from './name-writer';
import { ChunkSink, type BlockConsumer, type RenderedBody } from './sink';

/** Longest stretch, in ms, the renderer runs before it yields (well under the 20 ms stall goal). */
export const DEFAULT_SLICE_MS = 5;

/**
 * Past this much of a run, the renderer yields before starting a family: prom-client 15 keeps a
 * metric's series in a plain object, whose keys V8 lists in one step that cannot be split (23 ms
 * for 100 000 keys here; docs/benchmarks.md), so that step starts a turn of its own.
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
  /** How the scrape writes metric and label names; it tells afterwards whether one was rewritten. */
  readonly names: NameWriter;
  /** Slice budget in ms. Default {@link DEFAULT_SLICE_MS}. */
  readonly sliceMs?: number;
  /** Where the encoded blocks go: kept, or compressed as they fill. */
  readonly consumer: BlockConsumer;
}

/** A metric whose `collect()` or `get()` threw or rejected: left out of the scrape. */
export interface CollectFailure {
  /** The family's name, as the registry holds it. */
  readonly family: string;
  /** What it threw or rejected with. */
  readonly error: unknown;
}

/** What {@link collectAll} gathered: the public metrics' data, and the metrics that failed, by index. */
interface Collected {
  readonly data: Array<PublicMetricData | undefined>;
  readonly failed: Map<number, CollectFailure>;
}

/**
 * Starts reading every metric: a storage-read metric's `collect()` is called (prom-client's own
 * `get()` awaits only a real Promise from it, so does this); a public metric's `get()` is called.
 * Neither is called while that metric's previous read is still pending (an earlier scrape timed out
 * on it, or a concurrent one started it): this scrape waits on that same read (`in-flight.ts`).
 * Every promise gets a handler at once, so a rejection is never reported as unhandled while the
 * others are still being started. A metric that throws or rejects is recorded as failed, by index;
 * the others are read as usual. The host's promises are waited on through `callHost`, so a
 * rendering abandoned by `signal` leaves nothing attached to a promise that never settles.
 */
async function collectAll(
  accesses: readonly MetricAccess[],
  step: () => Promise<void> | undefined,
  signal: AbortSignal | undefined,
): Promise<Collected> {
  const data: Array<PublicMetricData | undefined> = new Array<PublicMetricData | undefined>(accesses.length).fill(undefined);
  const failed = new Map<number, CollectFailure>();
  const pending: Array<Promise<void>> = [];
  for (const [i, access] of accesses.entries()) {
    let started: Promise<unknown> | undefined;
    if (access.kind === 'public') {
      const { metric } = access;
      const get = (): unknown => (typeof metric.getForPromString === 'function' ? metric.getForPromString() : metric.get());
      started = callHost(() => readOnce(metric, 'get', get), signal);
    } else {
      const { metric } = access;
      if (metric.collect) {
        const collect = (): unknown => {
          const result = metric.collect!();
          return result instanceof Promise ? result : undefined;
        };
        started = callHost(() => readOnce(metric, 'collect', collect), signal);
      }
    }
    if (started !== undefined) {
      const family = access.metric.name;
      pending.push(
        started.then(
          (value) => {
            if (access.kind === 'public') data[i] = value as PublicMetricData;
          },
          (error: unknown) => void failed.set(i, { family, error }),
        ),
      );
    }
    const pause = step();
    if (pause !== undefined) await pause;
  }
  await Promise.all(pending);
  return { data, failed };
}

/**
 * Writes one family. A storage-read family's walk is started first, by the caller: a storage that
 * changed shape in its `collect()` throws there, before anything of the family is written.
 */
function writeFamily(
  context: ProtoContext,
  access: MetricAccess,
  data: PublicMetricData | undefined,
  walk: Iterator<unknown> | undefined,
  protobuf: boolean,
): Promise<void> {
  switch (access.kind) {
    case 'scalar': {
      const series = walk as Iterator<ScalarSeries | undefined>;
      return protobuf ? writeScalarProto(context, access.metric, series) : writeScalar(context, access.metric, series);
    }
    case 'histogram': {
      const series = walk as Iterator<HistogramSeries | undefined>;
      return protobuf ? writeHistogramProto(context, access.metric, series) : writeHistogram(context, access.metric, series);
    }
    case 'public':
      return protobuf ? writePublicProto(context, access.metric, data!) : writePublic(context, access.metric, data!);
  }
}

/** A rendered registry: the body, and the families left out of it. */
export interface RenderedRegistry {
  /** The exposition, as UTF-8 (or compressed, as the consumer makes it). */
  readonly body: RenderedBody;
  /** The metrics whose `collect()` or `get()` threw or rejected, in registry order: not in the body. */
  readonly failures: readonly CollectFailure[];
}

/**
 * The exposition of `registry` in `options.format`, as UTF-8, without the metrics whose
 * `collect()` or `get()` threw or rejected (as client_golang's `ContinueOnError`): those are
 * answered beside the body. Rejects with the signal's reason once aborted, or when writing fails.
 */
export async function renderRegistry(registry: ReadableRegistry, options: RenderOptions): Promise<RenderedRegistry> {
  const { signal, consumer } = options;
  // Aborting stops the rendering while it waits for its turn: no further slice runs for nobody.
  const step = cooperativeTicker(options.sliceMs ?? DEFAULT_SLICE_MS, 8, signal);
  try {
    const accesses = registry.metrics.map((metric) => {
      const access = accessMetric(metric, registry.client);
      if (access === undefined) throw new TypeError(`the registry holds something that is not a metric: ${cutText(hostText(metric), 64)}`);
      return access;
    });
    const { data, failed } = await collectAll(accesses, step, signal);
    signal?.throwIfAborted();
    const protobuf = options.format === 'protobuf';
    const defaults = protobuf ? [] : defaultPairs(registry.defaultLabels, options.names);
    const context: ProtoContext = {
      sink: new ChunkSink(consumer),
      // The protobuf writers use none of the text dialect.
      dialect: dialectOf(protobuf ? 'text' : options.format),
      defaults,
      nullishDefaults: registry.client.storage === 'label-map' ? defaults : undefined,
      protoNullishDefaults: registry.client.storage === 'label-map',
      protoDefaults: protobuf ? protoDefaults(registry.defaultLabels, options.names) : [],
      names: options.names,
      exemplars: options.exemplars,
      step,
    };
    const body = await writeFamilies(context, accesses, data, failed, protobuf, signal);
    return { body, failures: accesses.flatMap((_, i) => failed.get(i) ?? []) };
  } catch (err) {
    consumer.abort();
    throw err;
  }
}

/**
 * Writes every family but the failed ones, one series per step, each family's listing in a turn
 * of its own when the current one is already used. A family whose storage changed shape in its
 * `collect()` (a host replacing the client's store) is left out and added to `failed`, as a
 * failing `collect()` is: the rest of the scrape is served.
 */
async function writeFamilies(
  context: ProtoContext,
  accesses: readonly MetricAccess[],
  data: ReadonlyArray<PublicMetricData | undefined>,
  failed: Map<number, CollectFailure>,
  protobuf: boolean,
  signal: AbortSignal | undefined,
): Promise<RenderedBody> {
  const { dialect, sink } = context;
  let written = 0;
  for (let i = 0; i < accesses.length; i += 1) {
    if (failed.has(i)) continue;
    const access = accesses[i]!;
    if (performance.now() - startOfRun() >= LISTING_HEADROOM_MS) await nextTurn({ budgetMs: LISTING_HEADROOM_MS, signal });
    let walk: Iterator<unknown> | undefined;
    try {
      walk = access.kind === 'public' ? undefined : access.series();
    } catch (error) {
      failed.set(i, { family: access.metric.name, error });
      continue;
    }
    if (written > 0 && !protobuf) sink.put(dialect.familySeparator);
    await writeFamily(context, access, data[i], walk, protobuf);
    written += 1;
  }
  // Delimited protobuf messages need no separator and no end marker.
  if (!protobuf) sink.put(dialect.end(written));
  return sink.finish();
}
