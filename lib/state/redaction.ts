/** What a redacted value is replaced with. */
export const REDACTED = '[REDACTED]';

import { JsonSerializationError, pathSegment } from '../json-stream/errors';
import { jsonView } from '../jsonpath/value';

/** Deepest nesting redaction walks; deeper data is an explicit error, never silently cut. */
const MAX_REDACTION_DEPTH = 2000;

/** A matcher over key names, compiled once from the host's `redactKeys`. */
export type KeyMatcher = (key: string) => boolean;

/**
 * Compiles `redactKeys` into one matcher. Strings match whole key names case-insensitively;
 * regular expressions are tested as given. Returns `undefined` when there is nothing to redact, so
 * the common case costs nothing on read.
 */
export function compileKeyMatcher(keys: readonly (string | RegExp)[] | undefined): KeyMatcher | undefined {
  if (!keys || keys.length === 0) return undefined;
  const names = new Set<string>();
  const patterns: RegExp[] = [];
  for (const key of keys) {
    if (typeof key === 'string') names.add(key.toLowerCase());
    else if (key instanceof RegExp) patterns.push(new RegExp(key.source, key.flags.replace(/[gy]/g, '')));
    else throw new TypeError(`redactKeys entries must be strings or RegExps, got ${typeof key}`);
  }
  return (key) => names.has(key.toLowerCase()) || patterns.some((p) => p.test(key));
}

/** Joins two optional matchers. */
export function eitherMatcher(a: KeyMatcher | undefined, b: KeyMatcher | undefined): KeyMatcher | undefined {
  if (!a) return b;
  if (!b) return a;
  return (key) => a(key) || b(key);
}

/**
 * Returns `value` with every property whose key matches replaced by {@link REDACTED}, walking the
 * value `JSON.stringify` would serialise (what `toJSON()` returns, at any depth), so that a key a
 * `toJSON()` adds is redacted too.
 *
 * Copy-on-write: subtrees with nothing to redact are returned as the same references, so only the
 * ancestors of a redacted key are copied. The input is never mutated. Redaction never changes what
 * other data looks like: a cycle throws the same {@link JsonSerializationError} a dump would, and
 * nesting deeper than {@link MAX_REDACTION_DEPTH} throws rather than being cut short.
 */
export function redact(value: unknown, matches: KeyMatcher): unknown {
  return redactNode(jsonView(value, ''), matches, 0, '$', new Map());
}

function redactNode(value: unknown, matches: KeyMatcher, depth: number, path: string, ancestors: Map<object, string>): unknown {
  if (value === null || typeof value !== 'object') return value;
  const seenAt = ancestors.get(value);
  if (seenAt !== undefined) throw new JsonSerializationError(path, 'cycle', `cycle (the value is its own ancestor at ${seenAt})`);
  if (depth > MAX_REDACTION_DEPTH) {
    throw new JsonSerializationError(
      path,
      'threw',
      `nested deeper than ${MAX_REDACTION_DEPTH} levels, more than redaction (redactKeys) walks`,
    );
  }
  ancestors.set(value, path);
  try {
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        const next = redactNode(jsonView(item, String(i)), matches, depth + 1, `${path}[${i}]`, ancestors);
        if (next !== item) {
          copy ??= value.slice();
          copy[i] = next;
        }
      }
      return copy ?? value;
    }
    let copy: Record<string, unknown> | undefined;
    const source = value as Record<string, unknown>;
    for (const key of Object.keys(source)) {
      const item = source[key];
      const next = matches(key) ? REDACTED : redactNode(jsonView(item, key), matches, depth + 1, path + pathSegment(key), ancestors);
      if (next !== item) {
        copy ??= { ...source };
        // Defined, not assigned: assigning a key named `__proto__` would set the copy's prototype.
        Object.defineProperty(copy, key, { value: next, writable: true, enumerable: true, configurable: true });
      }
    }
    return copy ?? value;
  } finally {
    ancestors.delete(value);
  }
}
