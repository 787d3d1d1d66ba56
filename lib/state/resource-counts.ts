/**
 * Resource counts, the one check for both ways they come in: pushed with `setResourceCounts`, or
 * answered by a host's own state (`resourceCounts()`, which the metrics call at each scrape).
 */
import { describeValue } from '../options';
import { cutText, MAX_ECHOED_MESSAGE, quoteText } from '../util/cut-text';
import { errorMessage } from '../util/error-message';

/**
 * Most resource types one set of counts may hold: each is a series of `<prefix>resource_count`,
 * and a controller watches a handful of kinds, not thousands.
 */
export const MAX_RESOURCE_TYPES = 10_000;

/** How the messages of {@link resourceCountEntries} name where the counts came from. */
export interface CountsSource {
  /** The counts as a whole are not an object of counts: `got` describes them. */
  whole(got: string, expected: string): string;
  /** One count is wrong. */
  entry(type: string, got: string, expected: string): string;
  /** Reading the counts threw (a getter, a Proxy). */
  unreadable(message: string): string;
}

const EXPECTED_WHOLE = `an object of counts by resource type, like { ingresses: 3 } (at most ${MAX_RESOURCE_TYPES.toLocaleString('en-US')} types)`;
const EXPECTED_COUNT = 'a finite number >= 0';

/** Whether `value` is an object whose own keys are its entries: not an array, Map, Set or promise. */
function isRecord(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  try {
    return !Array.isArray(value) && !(value instanceof Map) && !(value instanceof Set) && !(value instanceof Promise);
  } catch {
    // A revoked Proxy: listing it below throws, and says so.
    return true;
  }
}

/**
 * The `[type, count]` pairs of `counts`, checked: an object (not null, an array or a Map) of at
 * most {@link MAX_RESOURCE_TYPES} counts, each a finite number `>= 0`. Own keys only, so a type
 * named `__proto__` or `constructor` is a type like any other.
 *
 * @throws TypeError naming the source, the wrong value and what was expected; Error when reading
 *   the counts throws (the host's getter or Proxy).
 */
export function resourceCountEntries(counts: unknown, source: CountsSource): Array<[string, number]> {
  if (!isRecord(counts)) throw new TypeError(source.whole(describeValue(counts), EXPECTED_WHOLE));
  let entries: Array<[string, unknown]>;
  try {
    entries = Object.entries(counts);
  } catch (err) {
    throw new Error(source.unreadable(cutText(errorMessage(err), MAX_ECHOED_MESSAGE)), { cause: err });
  }
  if (entries.length > MAX_RESOURCE_TYPES) {
    throw new TypeError(source.whole(`an object of ${entries.length.toLocaleString('en-US')} types`, EXPECTED_WHOLE));
  }
  for (const [type, count] of entries) {
    if (typeof count !== 'number' || !Number.isFinite(count) || count < 0) {
      throw new TypeError(source.entry(quoteText(type, 64), describeValue(count), EXPECTED_COUNT));
    }
  }
  return entries as Array<[string, number]>;
}
