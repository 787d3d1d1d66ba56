/**
 * The order of a metric's series without listing them. V8 lists an object's keys in one call that
 * cannot be split (23 ms for 100 000 keys on an idle machine, superlinear in the count), so a
 * renderer that calls `Object.keys(hashMap)` on every scrape stalls the host once per large metric
 * however finely it slices the rest.
 *
 * prom-client 15 adds a series only by assigning a key the map does not own (`hashMap[hash] = …`)
 * and drops one only with `delete` (or by replacing the whole map on `reset()`). An assignment to a
 * key an object does not own consults its prototype chain, so a prototype whose one trap is `set`
 * learns every new series, in order, and never runs for the updates to existing series that are
 * the host's hot path (`inc()`, `set()`, `observe()` on a known label set). The index is a `Map`
 * from key to the sequence number of its latest insertion: a `Map` keeps insertion order, iterates
 * step by step, and a delete-then-set moves a key to the end exactly as V8 orders an object's
 * string keys when one is deleted and added again. Deleted keys are dropped lazily by the walks.
 *
 * Only maps found holding {@link INDEX_MIN_SERIES} series or more are indexed: below that a listing
 * costs well under a millisecond, and a new series on an indexed map costs about half a microsecond
 * more (the trap and the `Map`). A scrape indexes a large map only when it finds the same map a
 * second time: one the host replaces on every scrape (`reset()` in `collect()`) would be indexed
 * for nothing, so it is listed on every scrape, as before (docs/design.md gives the numbers).
 */

/** Series count from which a metric's map is indexed instead of listed on each scrape. */
export const INDEX_MIN_SERIES = 4096;

/** Key -> sequence number of its latest insertion, in insertion order. */
interface SeriesOrder {
  readonly keys: Map<string, number>;
  next: number;
}

type SeriesMap = Record<string, unknown>;

const orders = new WeakMap<object, SeriesOrder>();
/** Large maps a scrape has listed once: indexed if a later scrape finds them again. */
const listedOnce = new WeakSet<object>();

/**
 * Starts indexing `map` when it can be watched: a plain extensible object whose prototype is still
 * `Object.prototype` (anything else is left as the host made it and is listed on each scrape). Its
 * current keys are listed once, here.
 */
function watch(map: SeriesMap, listed: readonly string[]): void {
  if (Object.getPrototypeOf(map) !== Object.prototype || !Object.isExtensible(map)) return;
  const order: SeriesOrder = { keys: new Map(), next: 0 };
  for (const key of listed) order.keys.set(key, order.next++);
  // The trap's target stands where Object.prototype stood: reads of keys the map lacks,
  // `instanceof Object`, `toString` and `__proto__` behave as before.
  const stand = Object.create(Object.prototype) as object;
  const learner = new Proxy(stand, {
    set(target, key, value, receiver) {
      if (receiver === map && typeof key === 'string') {
        order.keys.delete(key);
        order.keys.set(key, order.next++);
      }
      return Reflect.set(target, key, value, receiver);
    },
  });
  Object.setPrototypeOf(map, learner);
  orders.set(map, order);
}

/**
 * Lists `map` and, when it holds {@link INDEX_MIN_SERIES} series or more, indexes it from then on:
 * at once when `now` (the map outlived something already, such as the router's creation), else
 * when the same map is listed a second time. Answers the keys listed, or undefined when the map
 * was already indexed.
 */
export function indexSeries(map: SeriesMap, now: boolean): readonly string[] | undefined {
  if (orders.has(map)) return undefined;
  const listed = Object.keys(map);
  if (listed.length >= INDEX_MIN_SERIES) {
    if (now || listedOnce.has(map)) watch(map, listed);
    else listedOnce.add(map);
  }
  return listed;
}

/** Whether `map` is indexed (for tests and benchmarks). */
export function isIndexed(map: object): boolean {
  return orders.has(map);
}

/**
 * `map`'s keys in the order `Object.keys(map)` gives them, listed only when the map is not indexed
 * (and indexed when large and listed before). A walk of an indexed map reads the index step by step: series
 * added while it is paused are left for the next scrape, and one deleted and added again while it
 * is paused is written at most once.
 */
export function seriesKeys(map: SeriesMap): Iterable<string> {
  const order = orders.get(map);
  if (order === undefined) return indexSeries(map, false)!;
  return walk(map, order);
}

function* walk(map: SeriesMap, order: SeriesOrder): Generator<string, void, undefined> {
  const end = order.next;
  for (const [key, seq] of order.keys) {
    // Everything from here on was added (or moved by a delete and add) after the walk began.
    if (seq >= end) return;
    if (Object.prototype.hasOwnProperty.call(map, key)) yield key;
    else order.keys.delete(key);
  }
}
