import { types } from 'node:util';

const { isProxy, isBoxedPrimitive, isDate } = types;
const getProto = Object.getPrototypeOf as (value: object) => object | null;
const getOwn = Object.getOwnPropertyDescriptor;
const hasOwn = Object.prototype.hasOwnProperty;
// Annex B's __lookupGetter__ finds an accessor's getter without calling it and without allocating a
// descriptor; it looks along the prototype chain as a property read does (an array's hole reads
// Array.prototype). For array indices it is faster than Object.getOwnPropertyDescriptor (37 against
// 60 ns per element on Node 20), for object keys slower.
const lookupGetter = (Object.prototype as unknown as { __lookupGetter__(key: PropertyKey): unknown }).__lookupGetter__;
const OBJECT_PROTO: object = Object.prototype;
const ARRAY_PROTO: object = Array.prototype;
const DATE_PROTO: object = Date.prototype;
// Captured at load so that a replaced method is recognised as not the intrinsic one.
const DATE_TO_JSON = Date.prototype.toJSON;
const DATE_TO_ISO_STRING = Date.prototype.toISOString;
const DATE_VALUE_OF = Date.prototype.valueOf;
const DATE_TO_PRIMITIVE: unknown = getOwn(Date.prototype, Symbol.toPrimitive)?.value;

// A probe walks no deeper than this: it keeps the probe's own recursion and JSON.stringify's far
// from any stack limit, and deeper values are rare enough to take the walker's path.
export const MAX_DEPTH = 64;
// Estimated characters of the parts whose exact length would cost a conversion to find out.
const NUMBER_CHARS = 8;
const DATE_CHARS = 30;

/**
 * Decides, without running any user code, whether values can be written by one native
 * `JSON.stringify` call: the text must be exactly what the streaming walker would write, user
 * code must run exactly as often and in the same order, and the text must be small enough to be
 * one short synchronous step.
 *
 * That holds for a value with no Proxy (traps are user code), no own accessor property (a getter
 * would run once here and once more natively), no `toJSON` other than an unmodified Date's (a
 * `toJSON` at the top of the value would receive the wrong key, and its result has no size
 * bound), no boxed primitive (its `valueOf` / `toString` are user code), no BigInt and no -0, whose JSON
 * is estimated within the budget and which nests at most 64 levels. A cycle never fits (the walk
 * around it exhausts the budget), so JSON.stringify cannot throw, and errors are always found and
 * named by the walker. Strings needing escapes can make the real text up to 6 times the estimate,
 * long numbers up to 3 times; both stay short enough.
 *
 * Every check reads prototypes, `in` and getters without calling them, which runs no user code on
 * objects that are not proxies and have no proxy on their prototype chain.
 */
export class SubtreeProbe {
  /** Values looked at by the last {@link measure} call, to charge to the caller's work budget. */
  nodes = 0;
  /**
   * When the last {@link measure} failed: the containers that were open where it gave up,
   * innermost first. Each holds the reason it failed, so none can be written natively as a whole,
   * and the walker enters them without probing them again. Without this, a deep value would be
   * probed again at every level the walker enters, at a cost quadratic in its depth.
   */
  readonly failedPath: object[] = [];
  /**
   * Whether the last {@link measure} failed because the value cannot be written natively at any
   * size (user code, -0, BigInt, deep nesting), rather than because it is larger than the budget.
   */
  refused = false;
  /** Whether Object.prototype or Array.prototype (and so every plain object or array) has a toJSON. */
  private objectProtoToJson = false;
  private arrayProtoToJson = false;
  /** Arrays with the standard prototype skip the prototype-chain check, unless it was altered. */
  private arrayChainPlain = true;

  /**
   * The budget left once `value` (an array element or object member as read from its holder,
   * before `toJSON`) is written natively, or a negative number when it cannot be (then, for an
   * object, {@link failedPath} says where the probe stopped).
   */
  measure(value: unknown, budget: number): number {
    this.nodes = 0;
    this.refused = false;
    // Read per call, not once: a host may add a toJSON to a prototype at any time.
    this.objectProtoToJson = 'toJSON' in OBJECT_PROTO;
    this.arrayChainPlain = getProto(ARRAY_PROTO) === OBJECT_PROTO;
    // Only on a plain chain: `in` on an altered one could reach a Proxy (user code).
    this.arrayProtoToJson = this.arrayChainPlain && 'toJSON' in ARRAY_PROTO;
    if (this.failedPath.length !== 0) this.failedPath.length = 0;
    return this.member(value, budget, 0);
  }

  private member(value: unknown, budget: number, depth: number): number {
    this.nodes++;
    switch (typeof value) {
      case 'string':
        return budget - 2 - value.length;
      case 'number':
        // JSON.stringify drops the sign of -0; the walker keeps it.
        return Object.is(value, -0) ? this.refuse() : budget - NUMBER_CHARS;
      case 'boolean':
        return budget - 5;
      case 'undefined':
      case 'symbol':
        return budget - 4;
      case 'bigint':
        return this.refuse();
      case 'function':
        // JSON.stringify reads a function's toJSON too, and calls it when there is one.
        return isProxy(value) || !this.noProxyIn(getProto(value)) || 'toJSON' in value ? this.refuse() : budget - 4;
      default:
        if (value === null) return budget - 4;
        budget = this.container(value as object, budget, depth + 1);
        if (budget < 0) this.failedPath.push(value as object);
        return budget;
    }
  }

  private container(value: object, budget: number, depth: number): number {
    if (depth > MAX_DEPTH || isProxy(value)) return this.refuse();
    const proto = getProto(value);
    if (Array.isArray(value)) {
      if (proto === ARRAY_PROTO && this.arrayChainPlain) {
        if (hasOwn.call(value, 'toJSON') || this.arrayProtoToJson) return this.refuse();
      } else if (!this.noProxyIn(proto) || 'toJSON' in value) {
        return this.refuse();
      }
      const length = value.length;
      budget -= 2 + length; // brackets and commas
      for (let i = 0; i < length && budget >= 0; i++) {
        if (lookupGetter.call(value, i) !== undefined) return this.refuse();
        const element: unknown = value[i];
        // Strings, the bulk of a controller's state, without a call per element.
        if (typeof element === 'string') {
          this.nodes++;
          budget -= 2 + element.length;
        } else {
          budget = this.member(element, budget, depth);
        }
      }
      return budget;
    }
    if (proto === OBJECT_PROTO) {
      // An own check and Object.prototype's, looked up once per probe: `in` would walk the chain
      // for every object.
      if (hasOwn.call(value, 'toJSON') || this.objectProtoToJson) return this.refuse();
    } else if (proto === null) {
      if (hasOwn.call(value, 'toJSON')) return this.refuse();
    } else {
      if (!this.noProxyIn(proto)) return this.refuse();
      // Boxed primitives convert through user-overridable methods; typed arrays can have millions
      // of index keys, which Object.keys would list before the budget could stop it.
      if (isBoxedPrimitive(value) || ArrayBuffer.isView(value)) return this.refuse();
      if ('toJSON' in value) return isPlainDate(value, proto) ? budget - DATE_CHARS : this.refuse();
    }
    budget -= 2; // braces
    // for-in lists the own enumerable keys JSON.stringify writes without allocating an array of
    // them (an inherited enumerable key it also lists is refused below).
    for (const key in value) {
      // The descriptor both finds an accessor without calling it and holds the value: one call per
      // key instead of a getter lookup and a read (15 % of the probe's time on Node 20 and 24). An
      // inherited enumerable key has none: JSON.stringify skips it and the probe leaves the
      // unusual case to the walker.
      const descriptor = getOwn(value, key);
      if (descriptor === undefined || descriptor.get !== undefined) return this.refuse();
      const member: unknown = descriptor.value;
      budget -= 4 + key.length; // quotes, colon, comma
      if (typeof member === 'string') {
        this.nodes++;
        budget -= 2 + member.length;
      } else {
        budget = this.member(member, budget, depth);
      }
      if (budget < 0) return budget;
    }
    return budget;
  }

  private refuse(): number {
    this.refused = true;
    return -1;
  }

  /** True when no object on the prototype chain from `proto` is a Proxy (whose traps `in` would run). */
  private noProxyIn(proto: object | null): boolean {
    for (let p = proto; p !== null; p = getProto(p)) {
      if (isProxy(p)) return false;
      if (p === OBJECT_PROTO) return true;
    }
    return true;
  }
}

/**
 * The probe every serializer uses. One instance, not one per answer: optimised code can hold the
 * instance it was compiled with, and a per-answer probe dies at the next full collection and takes
 * that code with it, so each answer after a full GC walked in unoptimised code (a 1 MB probe took
 * 4-5 ms instead of 1.5, measured on Node 20 with --trace-deopt showing "weak objects"). Sharing is
 * safe: {@link SubtreeProbe.measure} is synchronous and runs no user code, and callers read its
 * results before anything else can measure.
 */
export const sharedProbe = new SubtreeProbe();

/**
 * A Date whose JSON comes from the intrinsic methods alone (toJSON, its valueOf / @@toPrimitive,
 * toISOString): short, independent of its key, and no user code runs while it is written.
 */
function isPlainDate(value: object, proto: object): boolean {
  return (
    proto === DATE_PROTO &&
    isDate(value) &&
    Reflect.ownKeys(value).length === 0 &&
    getOwn(DATE_PROTO, 'toJSON')?.value === DATE_TO_JSON &&
    getOwn(DATE_PROTO, 'toISOString')?.value === DATE_TO_ISO_STRING &&
    getOwn(DATE_PROTO, 'valueOf')?.value === DATE_VALUE_OF &&
    getOwn(DATE_PROTO, Symbol.toPrimitive)?.value === DATE_TO_PRIMITIVE
  );
}
