import { checkOptionObject, integerOption } from '../options';

/**
 * Bounds on what one template may cost. A template comes from a query string, so every dimension
 * a hostile or careless one could blow up (length, parse nesting, evaluation work, result and
 * output size) has a ceiling, and going over it is a clean error (kind `limit`, HTTP 413, or
 * `depth`, HTTP 400), never a hang or a stack overflow.
 */
export interface JsonPathLimits {
  /** Longest template accepted, in UTF-16 code units; longer fails with kind `limit` (HTTP 413). */
  maxTemplateLength: number;
  /** Most syntax nodes one template may parse into (sub-parses included); more fails with kind `limit` (HTTP 413). */
  maxNodes: number;
  /** Most values any one evaluation step may hold at once; more fails with kind `limit` (HTTP 413). */
  maxResults: number;
  /** Most evaluation steps (values visited) one execution may take; more fails with kind `limit` (HTTP 413). */
  maxSteps: number;
  /**
   * Largest output in UTF-8 bytes: printed text, and the JSON answer of a multi-valued selection
   * (wildcards, slices, unions, filters, `..`); more fails with kind `limit` (HTTP 413).
   */
  maxOutputBytes: number;
  /** Deepest nesting of sub-expressions (filters, unions, bracket keys) and of `range` blocks; deeper fails with kind `depth` (HTTP 400). */
  maxDepth: number;
}

/** The limits used where a caller gives none. */
export const DEFAULT_JSONPATH_LIMITS: Readonly<JsonPathLimits> = Object.freeze({
  maxTemplateLength: 4096,
  maxNodes: 4096,
  // Below maxSteps, so that holding too many values is its own, clearer error.
  maxResults: 25_000,
  // 150-350 ns per step on a 2-core VM, more in a host with a large heap: 50 000 steps keep one
  // evaluation under the 20 ms event-loop goal (benchmark 11); a million took 120-330 ms.
  maxSteps: 50_000,
  maxOutputBytes: 16 * 1024 * 1024,
  maxDepth: 64,
});

const LIMIT_NAMES = Object.keys(DEFAULT_JSONPATH_LIMITS) as (keyof JsonPathLimits)[];

/**
 * Merges caller limits over the defaults. Throws a `TypeError` naming the bad option, since a
 * limit that is not a positive integer is a programming error of the host, not of the request.
 */
export function resolveLimits(overrides?: Partial<JsonPathLimits>, where = 'jsonpath', path = 'limits'): JsonPathLimits {
  if (overrides === undefined) return DEFAULT_JSONPATH_LIMITS;
  const given = checkOptionObject(where, path, overrides, LIMIT_NAMES);
  const merged: JsonPathLimits = { ...DEFAULT_JSONPATH_LIMITS };
  for (const name of LIMIT_NAMES)
    merged[name] = integerOption(where, `${path}.${name}`, given[name], DEFAULT_JSONPATH_LIMITS[name], 1, Number.MAX_SAFE_INTEGER);
  return merged;
}
