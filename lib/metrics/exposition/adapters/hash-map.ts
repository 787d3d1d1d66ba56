/**
 * prom-client 15's read path: a Counter's, Gauge's or Histogram's series are the values of a plain
 * object, `metric.hashMap` (label hash -> series). Its keys are listed in one step, which V8 cannot
 * split (23 ms for 100 000 keys here; docs/benchmarks.md), then the series are read one per step;
 * an entry the host removed after the listing is a step with nothing to write. Read only.
 */
import type { StorageReader } from './stored';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The series of `map`, each through `read`, one per `next()`. */
function* hashMapSeries<E, S>(map: Record<string, E | undefined>, read: (entry: E) => S): Generator<S | undefined> {
  for (const key of Object.keys(map)) {
    const entry = map[key];
    yield entry === undefined ? undefined : read(entry);
  }
}

/** prom-client 15's storage. */
export const HASH_MAP: StorageReader = {
  holds: (metric) => isObject(metric.hashMap),
  walk<E, S>(metric: Record<string, unknown>, _client: unknown, read: (entry: E) => S) {
    // Read again when the walk starts, after `collect()`: `reset()` gives the metric a new object.
    const map = metric.hashMap;
    return isObject(map) ? hashMapSeries(map as Record<string, E | undefined>, read) : undefined;
  },
};
