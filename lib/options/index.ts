/**
 * The one place options are checked. Every option set of the package (state, introspection router
 * and its nested `jsonPath` and `access`, pprof, metrics router, controller metrics, health helpers)
 * is checked with these helpers, once, when it is created: a wrong value or an unknown key (at any
 * level) throws a `TypeError` that names the function and the option's full path and says how to
 * fix it, never at request time.
 */

import { quoteText } from '../util/cut-text';

/** Levenshtein distance, for "did you mean" hints (option names are short). */
function distance(a: string, b: string): number {
  const previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = previous[0]!;
    previous[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = previous[j]!;
      previous[j] = Math.min(above + 1, previous[j - 1]! + 1, diagonal + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1));
      diagonal = above;
    }
  }
  return previous[b.length]!;
}

/** ` (did you mean "x"?)` for the closest known name within a few edits, or an empty string. */
export function didYouMean(key: string, known: readonly string[]): string {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of known) {
    const d = distance(key, name);
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? ` (did you mean "${best}"?)` : '';
}

/** `where: path` for messages: `createIntrospectionRouter: jsonPath.maxSteps`. */
function label(where: string, path: string): string {
  return `${where}: ${path}`;
}

/**
 * Checks that `options` is a plain object (or undefined) whose keys are all `known`; answers it as
 * a record to read from. `path` is the option set's path (`''` for the top level).
 */
export function checkOptionObject(where: string, path: string, options: unknown, known: readonly string[]): Record<string, unknown> {
  if (options === undefined) return {};
  const name = path === '' ? 'options' : path;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`${label(where, name)} must be an object (or omitted), got ${describe(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      const full = path === '' ? key : `${path}.${key}`;
      throw new TypeError(
        `${where}: unknown option "${full}"${didYouMean(key, known)}; known options${path === '' ? '' : ` of ${path}`}: ${known.join(', ')}`,
      );
    }
  }
  return options as Record<string, unknown>;
}

/** An integer option within `[min, max]`, or `fallback` when undefined. */
export function integerOption(where: string, path: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new TypeError(`${label(where, path)} must be an integer from ${min} to ${max.toLocaleString('en-US')}, got ${describe(value)}`);
  }
  return value;
}

/** A boolean option, or `fallback` when undefined. */
export function booleanOption(where: string, path: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${label(where, path)} must be true or false, got ${describe(value)}`);
  return value;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return quoteText(value, 40);
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  return String(value);
}
