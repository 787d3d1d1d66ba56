/**
 * `@prometheus-io/client` 0.16's read path: a Counter's, Gauge's or Histogram's series are kept in
 * a `LabelMap` (`metric.store`), whose `values()` is a Map's live iterator, walked one series per
 * step: series added during the walk are met, removed ones skipped. The walk reads at most as many
 * series as the store held when it started (its public `size`), so a host adding series faster
 * than a scrape reads them cannot keep the scrape going for ever. Read only.
 */
import type { MetricsClient } from '../../client';
import type { StorageReader } from './stored';

/** A `LabelMap` as the walk uses it. */
interface Store {
  values(): Iterator<unknown>;
  readonly size?: unknown;
}

/**
 * Whether `store` is a `LabelMap` of `client` whose `values()` is LabelMap's own (not one the
 * host put on the instance).
 */
function isLabelMap(store: unknown, client: MetricsClient): store is Store {
  const labelMap = client.labelMap;
  if (labelMap === undefined || !(store instanceof labelMap)) return false;
  const { values } = store as { values?: unknown };
  return typeof values === 'function' && values === (labelMap.prototype as { values?: unknown }).values;
}

/** The series of `store`, each through `read`, one per `next()`, bounded by its size at the start. */
function* labelMapSeries<E, S>(store: Store, read: (entry: E) => S): Generator<S | undefined> {
  const size = store.size;
  let left = typeof size === 'number' && size >= 0 ? size : Infinity;
  const all = store.values.call(store) as Iterator<E>;
  for (let next = all.next(); next.done !== true && left > 0; next = all.next(), left -= 1) {
    yield next.value === undefined ? undefined : read(next.value);
  }
}

/** `@prometheus-io/client` 0.16's storage. */
export const LABEL_MAP: StorageReader = {
  holds: (metric, client) => isLabelMap(metric.store, client),
  walk<E, S>(metric: Record<string, unknown>, client: MetricsClient, read: (entry: E) => S) {
    // Read again when the walk starts, after `collect()`: `reset()` gives the metric a new store.
    const store = metric.store;
    return isLabelMap(store, client) ? labelMapSeries(store, read) : undefined;
  },
};
