/**
 * How the engine sees JavaScript data: as the JSON it would serialise to. Objects are maps of their
 * own enumerable string keys (never anything inherited, so `constructor` or `__proto__` are found
 * only when the data itself holds them); `undefined`, functions and symbols are absent, as
 * `JSON.stringify` leaves them out; typed arrays are arrays of numbers. Nothing here writes to the data.
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

/** Whether a value is indexed like an array. */
export function isArrayLike(value: unknown): value is ArrayLikeValue {
  return Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView));
}

/** Whether a value is a map of keys (any non-array object). */
export function isObjectMap(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !isArrayLike(value);
}

/** Element `index` of an array, absent elements (holes, `undefined`) read as null, as JSON has them. */
export function elementAt(array: ArrayLikeValue, index: number): unknown {
  const value: unknown = array[index];
  return isAbsent(value) ? null : value;
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
  const value: unknown = descriptor.get !== undefined ? descriptor.get.call(obj) : descriptor.value;
  return isAbsent(value) ? NOT_FOUND : { found: true, value };
}

/** The present values of an object's own enumerable keys, in key order. */
export function memberValues(obj: object): unknown[] {
  const values: unknown[] = [];
  for (const key of Object.keys(obj)) {
    const value: unknown = (obj as Record<string, unknown>)[key];
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
