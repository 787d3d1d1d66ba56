/**
 * The adapters: a registry read into the model (`../model.ts`), each metric through one of three
 * read paths, chosen per metric by what it is:
 *
 * - `hash-map.ts`: prom-client 15's Counter, Gauge and Histogram, whose series are a plain object's
 *   values (its keys listed in one step, then one series per step);
 * - `label-map.ts`: `@prometheus-io/client` 0.16's, whose series are a `LabelMap` walked through
 *   `values()`, one per step (both through `stored.ts`, which reads their common entries);
 * - `public.ts`: anything else, through its public `get()`.
 *
 * Every metric's read is started in registration order (as `registry.metrics()` starts them: its
 * `collect()`, or its `get()`), all are awaited, then the families follow one another from an async
 * generator, each with its series to be read one per step. A metric whose read throws or rejects
 * is left out and listed in {@link CollectedRegistry.failures}, as is one whose storage changed
 * shape in its `collect()`: the rest of the scrape is served.
 */
import { performance } from 'node:perf_hooks';
import type { MetricsClient } from '../../client';
import { nextTurn, startOfRun } from '../../../util/cooperative';
import { cutText } from '../../../util/cut-text';
import { hostText } from '../dialect';
import type { ExemplarSource, Family, LabelSet, ModelNeeds, RegistryModel } from '../model';
import { HASH_MAP } from './hash-map';
import { LABEL_MAP } from './label-map';
import { publicAccess, type PublicAccess, type PublicMetric } from './public';
import { storedAccess, type AnyStoredAccess, type StorageReader } from './stored';

/**
 * Past this much of a run, a family is started in a turn of its own: prom-client 15's listing of a
 * metric's keys, at the first step of its walk, cannot be split (`hash-map.ts`).
 */
const LISTING_HEADROOM_MS = 1;

/** How one metric is read. */
export type MetricAccess = AnyStoredAccess | PublicAccess;

/** A metric whose `collect()` or `get()` threw or rejected: left out of the scrape. */
export interface CollectFailure {
  /** The family's name, as the registry holds it. */
  readonly family: string;
  /** What it threw or rejected with. */
  readonly error: unknown;
}

/** A registry the adapters can read without calling its `metrics()`. */
export interface ReadableRegistry {
  /** The metrics, in registration order (the exposition order). */
  readonly metrics: readonly unknown[];
  /** `setDefaultLabels()`'s labels, or undefined when there are none. */
  readonly defaultLabels: LabelSet | undefined;
  /** The client the registry is of: its metrics are read as that client stores them. */
  readonly client: MetricsClient;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The storage reader of `client`'s version, or undefined for a version read only through `get()`. */
function readerOf(client: MetricsClient | undefined): StorageReader | undefined {
  if (client?.storage === 'hash-map') return HASH_MAP;
  return client?.storage === 'label-map' ? LABEL_MAP : undefined;
}

/**
 * How to read `metric`, a metric of a registry of `client`: through its storage, read-only, when
 * it is that client's Counter, Gauge or Histogram as they ship (or as `withExemplars` extends them)
 * and the client's version is one whose storage this package knows; else through its public
 * `get()`. Undefined for something that is not a metric.
 */
export function accessMetric(metric: unknown, client: MetricsClient | undefined): MetricAccess | undefined {
  if (!isObject(metric) || typeof metric.get !== 'function' || typeof metric.name !== 'string') return undefined;
  const reader = readerOf(client);
  const stored = reader === undefined ? undefined : storedAccess(metric, client!, reader);
  return stored ?? publicAccess(metric as unknown as PublicMetric);
}

/**
 * Reads `registry`'s metrics and default labels, or answers undefined when it is not a plain
 * Registry of `client` (a subclass overriding how it renders, a registry of no client): such a
 * registry is rendered by its own `metrics()` in its own format.
 */
export function readRegistry(registry: unknown, client: MetricsClient | undefined): ReadableRegistry | undefined {
  const Registry = client?.module.Registry;
  if (client === undefined || Registry === undefined || !(registry instanceof Registry)) return undefined;
  const proto = Registry.prototype as unknown as Record<string, unknown>;
  const own = registry as unknown as Record<string, unknown>;
  for (const method of ['metrics', 'getMetricsAsString', 'getMetricsAsArray']) {
    if (own[method] !== proto[method]) return undefined;
  }
  const defaults = own._defaultLabels;
  if (defaults !== undefined && !isObject(defaults)) return undefined;
  const hasDefaults = defaults !== undefined && Object.keys(defaults).length > 0;
  return { metrics: registry.getMetricsAsArray(), defaultLabels: hasDefaults ? defaults : undefined, client };
}

/** Options of {@link collectRegistry}. */
export interface CollectOptions {
  /** Call after each step: a promise to await when the slice is used up (it rejects once the scrape is abandoned). */
  readonly step: () => Promise<void> | undefined;
  /** Aborting it stops the reading while it waits. */
  readonly signal: AbortSignal | undefined;
  /** Exemplars, native buckets and start timestamps kept outside the client. */
  readonly exemplars: ExemplarSource | undefined;
}

/** A registry whose metrics have been read: the model's families, to be taken one after another. */
export interface CollectedRegistry {
  /** What holds for every family. */
  readonly model: RegistryModel;
  /** The families, in registration order, with what `needs` says; each one's walk starts as it is taken. */
  families(needs: ModelNeeds): AsyncGenerator<Family, void, undefined>;
  /** The metrics left out so far, in registry order. */
  failures(): readonly CollectFailure[];
}

/**
 * Starts every metric's read, one per step: neither a `collect()` nor a `get()` is called while
 * that metric's previous read is still pending (an earlier scrape timed out on it, or a
 * concurrent one started it): this scrape waits on that same read (`in-flight.ts`). Every promise
 * gets a handler at once, so a rejection is never reported as unhandled while the others are still
 * being started. The host's promises are waited on through `callHost`, so a reading abandoned by
 * `signal` leaves nothing attached to a promise that never settles.
 */
async function collectAll(
  accesses: readonly MetricAccess[],
  options: CollectOptions,
  failed: Map<number, CollectFailure>,
): Promise<unknown[]> {
  const collected = new Array<unknown>(accesses.length).fill(undefined);
  const pending: Array<Promise<void>> = [];
  for (const [i, access] of accesses.entries()) {
    const started = access.start(options.signal);
    if (started !== undefined) {
      const family = access.metric.name;
      pending.push(
        started.then(
          (value) => void (collected[i] = value),
          (error: unknown) => void failed.set(i, { family, error }),
        ),
      );
    }
    const pause = options.step();
    if (pause !== undefined) await pause;
  }
  await Promise.all(pending);
  return collected;
}

/**
 * The families of the metrics read, in order, but the failed ones; each family's walk started in a
 * turn of its own when the current one is already used. A storage that changed shape in its
 * `collect()` (a host replacing the client's store) leaves its family out, added to `failed`.
 */
async function* familiesOf(
  accesses: readonly MetricAccess[],
  collected: readonly unknown[],
  failed: Map<number, CollectFailure>,
  needs: ModelNeeds,
  options: CollectOptions,
): AsyncGenerator<Family, void, undefined> {
  for (let i = 0; i < accesses.length; i += 1) {
    if (failed.has(i)) continue;
    const access = accesses[i]!;
    if (performance.now() - startOfRun() >= LISTING_HEADROOM_MS) await nextTurn({ budgetMs: LISTING_HEADROOM_MS, signal: options.signal });
    if (access.kind === 'public') {
      yield access.family(collected[i], needs);
      continue;
    }
    let family: Family;
    try {
      family = access.family(collected[i], needs, options.exemplars);
    } catch (error) {
      failed.set(i, { family: access.metric.name, error });
      continue;
    }
    yield family;
  }
}

/**
 * Reads `registry`: every metric's `collect()` or `get()` started in registration order and
 * awaited (a metric that throws or rejects is recorded as failed; the others are read as usual).
 * Rejects with the signal's reason once aborted.
 *
 * @throws TypeError when the registry holds something that is not a metric.
 */
export async function collectRegistry(registry: ReadableRegistry, options: CollectOptions): Promise<CollectedRegistry> {
  const accesses = registry.metrics.map((metric) => {
    const access = accessMetric(metric, registry.client);
    if (access === undefined) throw new TypeError(`the registry holds something that is not a metric: ${cutText(hostText(metric), 64)}`);
    return access;
  });
  const failed = new Map<number, CollectFailure>();
  const collected = await collectAll(accesses, options, failed);
  options.signal?.throwIfAborted();
  return {
    model: { defaultLabels: registry.defaultLabels, nullishDefaults: registry.client.storage === 'label-map' },
    families: (needs) => familiesOf(accesses, collected, failed, needs, options),
    failures: () => accesses.flatMap((_, i) => failed.get(i) ?? []),
  };
}
