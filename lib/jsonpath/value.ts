/**
 * How the engine sees JavaScript data: as the JSON `JSON.stringify` would serialise it, so that a
 * selection sees exactly what a dump serves. An object with `toJSON()` is seen as what it returns
 * (a Date as its ISO string, a Buffer as `{type, data}`, a host class as the fields it chose to
 * expose); objects are maps of their own enumerable string keys (never anything inherited, so
 * `constructor` or `__proto__` are found only when the data itself holds them); `undefined`,
 * functions and symbols are absent; non-finite numbers are null; typed arrays are maps of their
 * indices, as `JSON.stringify` writes them. Nothing here writes to the data.
 */

/**
 * The reference engine tells apart a null found inside the data (prints `null`) from having no
 * value at all (a null root, or a null element being ranged over: prints `<no value>`). This
 * marks the second.
 */
export const NO_VALUE: unique symbol = Symbol('jsonpath.noValue');

type TypedArray =
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

/** An array as the engine indexes it. */
export type ArrayLikeValue = readonly unknown[] | TypedArray;

/** Whether a property value is left out of the JSON view. */
export function isAbsent(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/** Whether a value is indexed like an array (a JSON array: typed arrays serialise as objects). */
export function isArrayLike(value: unknown): value is ArrayLikeValue {
  return Array.isArray(value);
}

/**
 * A value as `JSON.stringify` sees it before writing it: `toJSON(key)` applied once, non-finite
 * numbers as null. Everything the engine reads from the data passes through here.
 */
export function jsonView(value: unknown, key: string): unknown {
  if (typeof value === 'object' && value !== null) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON !== 'function') return value;
    const viewed: unknown = toJSON.call(value, key);
    if (typeof viewed === 'number' && !Number.isFinite(viewed)) return null;
    // JSON.stringify calls toJSON once: a result that has a toJSON of its own is written as its own
    // keys. A selection hands its values on to be serialised, so such a result is flattened here,
    // or the serialiser would call that second toJSON.
    if (typeof viewed === 'object' && viewed !== null && typeof (viewed as { toJSON?: unknown }).toJSON === 'function') {
      if (Array.isArray(viewed)) return Array.from(viewed as unknown[]);
      // An own toJSON is a function-valued key, which JSON leaves out anyway.
      const { toJSON: _ignored, ...keys } = viewed as Record<string, unknown>;
      return keys;
    }
    return viewed;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  return value;
}

/** Whether a value is a map of keys (any non-array object). */
export function isObjectMap(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !isArrayLike(value);
}

/** Element `index` of an array, absent elements (holes, `undefined`) read as null, as JSON has them. */
export function elementAt(array: ArrayLikeValue, index: number): unknown {
  const value: unknown = array[index];
  return isAbsent(value) ? null : jsonView(value, String(index));
}

/** The result of looking up one key. */
export type Member = { readonly found: true; readonly value: unknown } | { readonly found: false };

const NOT_FOUND: Member = Object.freeze({ found: false });

/**
 * Looks up an own enumerable key. A descriptor is read rather than `obj[key]` so that nothing on
 * the prototype chain can ever answer, and only the one key asked for is touched.
 */
export function ownMember(obj: object, key: string): Member {
  const descriptor = Object.getOwnPropertyDescriptor(obj, key);
  if (descriptor === undefined || !descriptor.enumerable) return NOT_FOUND;
  const value: unknown = jsonView(descriptor.get !== undefined ? descriptor.get.call(obj) : descriptor.value, key);
  return isAbsent(value) ? NOT_FOUND : { found: true, value };
}

/** The present values of an object's own enumerable keys, in key order. */
export function memberValues(obj: object): unknown[] {
  const values: unknown[] = [];
  for (const key of Object.keys(obj)) {
    const value: unknown = jsonView((obj as Record<string, unknown>)[key], key);
    if (!isAbsent(value)) values.push(value);
  }
  return values;
}

const encoder = new TextEncoder();

/** The UTF-8 bytes of a string, which is what the reference engine's wildcard yields for one. */
export function utf8Bytes(text: string): number[] {
  return Array.from(encoder.encode(text));
}

/** A short name of a value's JSON type, for error messages. */
export function describeKind(value: unknown): string {
  if (value === NO_VALUE || value === null || value === undefined) return 'null';
  if (isArrayLike(value)) return 'array';
  switch (typeof value) {
    case 'string':
      return 'string';
    case 'number':
    case 'bigint':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'object':
      return 'object';
    default:
      return typeof value;
  }
}
