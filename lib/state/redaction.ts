/** What a redacted value is replaced with. */
export const REDACTED = '[REDACTED]';

/** Nesting depth past which a subtree is not inspected but replaced whole (fails closed). */
const MAX_REDACTION_DEPTH = 256;

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
 * Returns `value` with every property whose key matches replaced by {@link REDACTED}.
 *
 * Copy-on-write: subtrees with nothing to redact are returned as the same references, so only the
 * ancestors of a redacted key are copied. The input is never mutated.
 */
export function redact(value: unknown, matches: KeyMatcher): unknown {
  return redactNode(value, matches, 0);
}

function redactNode(value: unknown, matches: KeyMatcher, depth: number): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_REDACTION_DEPTH) return REDACTED;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = redactNode(item, matches, depth + 1);
      if (next !== item) {
        copy ??= value.slice();
        copy[i] = next;
      }
    }
    return copy ?? value;
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return value;
  let copy: Record<string, unknown> | undefined;
  const source = value as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    const item = source[key];
    const next = matches(key) ? REDACTED : redactNode(item, matches, depth + 1);
    if (next !== item) {
      copy ??= { ...source };
      copy[key] = next;
    }
  }
  return copy ?? value;
}
