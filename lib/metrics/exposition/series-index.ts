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
 * string keys when one is deleted and added again. Deleted keys are dropped by the walks and by a
 * sweep that each new series advances.
 *
 * Which maps: every map a registry holds when the router is created (they outlive scrapes; a new
 * series on one costs 0.35–0.8 µs more), and a map of {@link INDEX_MIN_SERIES} series or more that a
 * scrape finds a second time. A map the host replaces between scrapes (`reset()`) would be indexed
 * for nothing, so it is listed on every scrape that finds a new one (docs/benchmarks.md).
 *
 * The host can undo the trap or go round it, so the index is checked before each use and given up
 * (the map listed on every scrape from then on, never indexed again, its prototype put back) when
 * it fails. A map whose prototype is no longer the trap (`Object.setPrototypeOf` to anything) fails
 * at once: one identity check per scrape. A series defined on the map (`Object.defineProperty`,
 * `Reflect.set` with the map as another object's receiver) passes no prototype and no JavaScript
 * call can count an object's keys without listing them all, so those are found by comparing the
 * index with a listing: on every scrape of a map whose index is below {@link INDEX_MIN_SERIES}
 * entries (listing it is cheap), and on every {@link VERIFY_EVERY}th scrape of a larger one.
 */
import { types } from 'node:util';

/** Series count from which a scrape indexes a map it finds a second time, instead of listing it again. */
export const INDEX_MIN_SERIES = 4096;

/**
 * Deleted series leave the map with `delete`, which no prototype sees. Walks drop the ones they
 * find gone, but with no walk (scrapes that fail, a metric no longer registered, no scraper) the
 * index would grow with every series ever created. So each new series also checks this many of
 * the entries the sweep has not checked for longest: in a steady churn the index stays within
 * about twice the live series, and a map that only grows loses nothing.
 */
const SWEEP_PER_INSERT = 2;

/**
 * A large map's walks between two listings that check its index: a series the host defines on the
 * map without assigning it is missing from at most this many scrapes less one.
 */
export const VERIFY_EVERY = 10;

/** One walk in progress: how far it has gone, and the keys moved from ahead of it that it still owes. */
interface Cursor {
  /** The walk covers the entries inserted before it began: sequence numbers below this. */
  readonly end: number;
  /** Sequence number of the last entry the walk has passed. */
  at: number;
  /** Keys deleted and added again (so moved to the end) from a place the walk had not reached. */
  readonly owed: Set<string>;
}

/** Key -> sequence number of its latest insertion, in insertion order; the walks reading it; the sweep. */
interface SeriesOrder {
  readonly keys: Map<string, number>;
  next: number;
  readonly walks: Set<Cursor>;
  /** Where the sweep for deleted series has got to; it starts again at the oldest entry when done. */
  sweep: Iterator<string> | undefined;
  /** The trap put in the map's prototype place: the index holds only while it is still there. */
  readonly learner: object;
  /** Scrapes that found the index large enough to walk: every {@link VERIFY_EVERY}th lists the map instead. */
  walked: number;
  /** Set when the index is given up: the trap learns nothing more. */
  released: boolean;
}

type SeriesMap = Record<string, unknown>;

/** Each indexed map's index; null for a map whose index was given up (listed on every scrape). */
const orders = new WeakMap<object, SeriesOrder | null>();
/** Large maps a scrape has listed once: indexed if a later scrape finds them again. */
const listedOnce = new WeakSet<object>();

/** Whether `Object.keys(map)` has `key`: an own enumerable property. */
function listable(map: SeriesMap, key: string): boolean {
  return Object.prototype.propertyIsEnumerable.call(map, key);
}

/** Records `key` as inserted now; a walk that had not reached its old place is owed it. */
function learn(map: SeriesMap, order: SeriesOrder, key: string): void {
  const before = order.keys.get(key);
  if (before !== undefined) {
    order.keys.delete(key);
    for (const walk of order.walks) if (before > walk.at && before < walk.end) walk.owed.add(key);
  }
  // Not while a walk is under way: a series deleted ahead of it and then added again must still be
  // found at its old place to be owed. Nor is the sweep's iterator kept meanwhile: a Map iterator
  // that does not move keeps every table the Map outgrows alive (96 MB under overlapping scrapes).
  if (order.walks.size === 0) sweep(map, order);
  else order.sweep = undefined;
  order.keys.set(key, order.next++);
}

/** Drops deleted series among the sweep's next entries (the key being added is not among them yet). */
function sweep(map: SeriesMap, order: SeriesOrder): void {
  for (let i = 0; i < SWEEP_PER_INSERT; i++) {
    order.sweep ??= order.keys.keys();
    const next = order.sweep.next();
    if (next.done === true) {
      order.sweep = undefined;
      return;
    }
    if (!listable(map, next.value)) order.keys.delete(next.value);
  }
}

/**
 * Starts indexing `map` when it can be watched: a plain extensible object (not a proxy) whose
 * prototype is still `Object.prototype` (anything else is left as the host made it and is listed on
 * each scrape).
 */
function watch(map: SeriesMap, listed: readonly string[]): void {
  if (types.isProxy(map) || Object.getPrototypeOf(map) !== Object.prototype || !Object.isExtensible(map)) return;
  // The trap's target stands where Object.prototype stood: reads of keys the map lacks,
  // `instanceof Object` and `toString` behave as before; `__proto__` reads this proxy.
  const stand = Object.create(Object.prototype) as object;
  const learner = new Proxy(stand, {
    set(target, key, value, receiver) {
      if (receiver === map && typeof key === 'string' && !order.released) learn(map, order, key);
      return Reflect.set(target, key, value, receiver);
    },
  });
  const order: SeriesOrder = { keys: new Map(), next: 0, walks: new Set(), sweep: undefined, learner, walked: 0, released: false };
  for (const key of listed) order.keys.set(key, order.next++);
  Object.setPrototypeOf(map, learner);
  orders.set(map, order);
}

/**
 * Whether the index, its entries gone from the map left out, is exactly `listed` (the map's keys,
 * in V8's order). Compares strings the map already holds, and reads the map only for entries that
 * do not match.
 */
function agrees(map: SeriesMap, order: SeriesOrder, listed: readonly string[]): boolean {
  let at = 0;
  for (const key of order.keys.keys()) {
    if (key === listed[at]) at++;
    else if (listable(map, key)) return false;
  }
  return at === listed.length;
}

/**
 * Gives up `map`'s index: the trap learns nothing more, the prototype goes back to what it was
 * when still the trap, and every scrape lists the map from then on. A walk already under way ends
 * on the index it began with.
 */
function release(map: SeriesMap, order: SeriesOrder): void {
  order.released = true;
  orders.set(map, null);
  if (Object.getPrototypeOf(map) === order.learner) Reflect.setPrototypeOf(map, Object.prototype);
}

/**
 * Lists `map` and indexes it from then on: at once when `now` (the router is being created: the
 * map outlives scrapes), else when it holds {@link INDEX_MIN_SERIES} series or more and a scrape
 * lists it a second time. Answers the keys listed, or undefined when the map was already indexed.
 */
export function indexSeries(map: SeriesMap, now: boolean): readonly string[] | undefined {
  const order = orders.get(map);
  if (order) return undefined;
  const listed = Object.keys(map);
  if (order === null) return listed;
  const large = listed.length >= INDEX_MIN_SERIES;
  if (now || (large && listedOnce.has(map))) watch(map, listed);
  else if (large) listedOnce.add(map);
  return listed;
}

/** Whether `map` is indexed (for tests and benchmarks). */
export function isIndexed(map: object): boolean {
  return Boolean(orders.get(map));
}

/** How many entries `map`'s index holds, live and not yet dropped (for tests). */
export function indexSize(map: object): number | undefined {
  return orders.get(map)?.keys.size;
}

/**
 * The keys to write of `map`, in the order `Object.keys(map)` gives them. A walk of an indexed map reads the index one entry per step and answers
 * undefined for an entry with nothing to write (a series deleted since, or one added since the
 * walk began), so that a caller stepping per answer slices that work too. A series deleted and
 * added again while the walk is paused is written once: where the walk meets it, or at the end
 * when it moved from a place the walk had not reached.
 *
 * The index is walked only while the map's prototype is still the trap and the index holds
 * {@link INDEX_MIN_SERIES} entries or more, and not on every {@link VERIFY_EVERY}th such scrape;
 * else the map is listed (as one not indexed is), and the index given up unless it agrees with
 * the listing.
 */
export function seriesKeys(map: SeriesMap): Iterable<string | undefined> {
  const order = orders.get(map);
  if (!order) return indexSeries(map, false)!;
  const intact = Object.getPrototypeOf(map) === order.learner;
  if (intact && order.keys.size >= INDEX_MIN_SERIES && ++order.walked % VERIFY_EVERY !== 0) return walk(map, order);
  const listed = Object.keys(map);
  if (!intact || !agrees(map, order, listed)) release(map, order);
  return listed;
}

function* walk(map: SeriesMap, order: SeriesOrder): Generator<string | undefined, void, undefined> {
  const cursor: Cursor = { end: order.next, at: -1, owed: new Set() };
  order.walks.add(cursor);
  order.sweep = undefined;
  try {
    for (const [key, seq] of order.keys) {
      // From here on are series added or moved since the walk began.
      if (seq >= cursor.end) break;
      cursor.at = seq;
      if (listable(map, key)) {
        yield key;
      } else {
        order.keys.delete(key);
        yield undefined;
      }
    }
    // Nothing can be owed from here on (a move is owed only from ahead of the walk). The owed keys
    // are taken from the walk's own set, not looked for in the index's tail, where a host moving
    // them again and again would keep them ahead of the walk.
    cursor.at = cursor.end;
    for (const key of cursor.owed) {
      if (listable(map, key)) {
        yield key;
      } else {
        yield undefined;
      }
    }
  } finally {
    order.walks.delete(cursor);
  }
}
