/** Why a value could not be written as JSON. */
export type JsonSerializationReason =
  /** An object or array contains itself (directly or through descendants). */
  | 'cycle'
  /** A BigInt (or a boxed BigInt) has no JSON form; the provider must convert it. */
  | 'bigint'
  /** The top-level value has no JSON form (`undefined`, a function or a symbol). */
  | 'no-value'
  /** A getter or a `toJSON()` method threw; the original error is the `cause`. */
  | 'threw'
  /**
   * Nesting deeper than allowed: any value past `maxDepth`, or a value that user code produced
   * (a getter, `toJSON()`, a Proxy) past `maxComputedDepth`, as an endlessly generated one would.
   */
  | 'too-deep'
  /** User code (getters, `toJSON()`, Proxies) produced more than `maxComputedBytes` of JSON. */
  | 'too-large';

/**
 * A value that `JSON.stringify` would reject (or that makes user code throw while serializing).
 * The message starts with the JSONPath of the offending value, for example
 * `$.vars.foo.bar: cycle (the value is its own ancestor at $.vars)`, so the provider that produced
 * it can be found without a debugger.
 */
export class JsonSerializationError extends Error {
  /** JSONPath of the offending value, `$` for the top level. */
  readonly path: string;
  /** What went wrong, for callers that branch on it. */
  readonly reason: JsonSerializationReason;
  constructor(path: string, reason: JsonSerializationReason, detail: string, options?: { cause?: unknown }) {
    super(`${shortenPath(path)}: ${detail}`, options);
    this.name = 'JsonSerializationError';
    this.path = path;
    this.reason = reason;
  }
}

/**
 * Stopped before the whole value was written: the `signal` aborted or the output closed (a client
 * that disconnected). Named and coded like Node's own `AbortError` so generic abort handling
 * recognises it.
 */
export class JsonStreamAbortError extends Error {
  /** Always `'ABORT_ERR'`, as on Node's `AbortError`. */
  readonly code = 'ABORT_ERR';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AbortError';
  }
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** One JSONPath step: `.name` when the key reads as an identifier, `["odd key"]` or `[3]` otherwise. */
export function pathSegment(key: string | number): string {
  if (typeof key === 'number') return `[${key}]`;
  return IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

// A 100 000-level path is a valid diagnosis but an unreadable message; `path` keeps it whole.
const MAX_MESSAGE_PATH = 400;
function shortenPath(path: string): string {
  if (path.length <= MAX_MESSAGE_PATH) return path;
  const half = MAX_MESSAGE_PATH / 2;
  return `${path.slice(0, half)}…${path.slice(path.length - half)}`;
}
