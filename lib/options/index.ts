/**
 * The one place options are checked. Every option set of the package (state, introspection router
 * and its nested `watch`, `limits`, `limits.jsonPath` and `access`, pprof, metrics router,
 * controller metrics, health helpers, the JSON writer) is checked with these helpers, once, when
 * it is created: a wrong value or an unknown key (at any level) throws a `TypeError` that names the
 * function and the option's full path and says how to fix it, never at request time. A factory
 * declares its options once (`./spec`): their kinds, ranges and defaults, from which its frozen
 * `*_DEFAULTS` object and its checks with these helpers are derived.
 */

import { cutText, MAX_ECHOED_MESSAGE, quoteText } from '../util/cut-text';
import { errorMessage } from '../util/error-message';

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

/** `where: path` for messages: `createIntrospectionRouter: limits.jsonPath.maxSteps`. */
function label(where: string, path: string): string {
  return `${where}: ${path}`;
}

/**
 * Checks that `options` is a plain object (or undefined) whose keys are all `known`; answers it as
 * a record to read from. `path` is the option set's path (`''` for the top level). An unknown key
 * is answered with the closest known one ("did you mean") and the list of known ones.
 */
export function checkOptionObject(where: string, path: string, options: unknown, known: readonly string[]): Record<string, unknown> {
  if (options === undefined) return {};
  const name = path === '' ? 'options' : path;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`${label(where, name)} must be an object (or omitted), got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const full = path === '' ? key : `${path}.${key}`;
    throw new TypeError(
      `${where}: unknown option "${full}"${didYouMean(key, known)}; known options${path === '' ? '' : ` of ${path}`}: ${known.join(', ')}`,
    );
  }
  return options as Record<string, unknown>;
}

/** ` (hint)` when there is a hint. */
function aside(hint: string | undefined): string {
  return hint === undefined ? '' : ` (${hint})`;
}

/**
 * A number option that passes `valid`, or `fallback` when undefined; an undefined `fallback`
 * makes the option required. `what` is asked for only when the value is wrong: options are also
 * checked on paths as hot as every answer, where building the message each time would cost.
 */
function numeric(
  where: string,
  path: string,
  value: unknown,
  fallback: number | undefined,
  valid: (n: number) => boolean,
  what: () => string,
): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'number' || !valid(value))
    throw new TypeError(`${label(where, path)} must be ${what()}, got ${describeValue(value)}`);
  return value;
}

/**
 * An integer option within `[min, max]`, or `fallback` when undefined. An undefined `fallback`
 * makes the option required. `hint` says what the number means when its name does not.
 */
export function integerOption(
  where: string,
  path: string,
  value: unknown,
  fallback: number | undefined,
  min: number,
  max: number,
  hint?: string,
): number {
  return numeric(
    where,
    path,
    value,
    fallback,
    (n) => Number.isSafeInteger(n) && n >= min && n <= max,
    () => `an integer from ${min} to ${max.toLocaleString('en-US')}${aside(hint)}`,
  );
}

/** The range of a {@link numberOption}: `[min, max]`, or `(min, max]` with `minExcluded`. */
export interface NumberRange {
  /** The least value, allowed unless `minExcluded`. */
  readonly min: number;
  /** The greatest value; `Infinity` allows `Infinity` itself, as "no limit". */
  readonly max: number;
  /** Whether `min` itself is refused (a duration that must be above 0). */
  readonly minExcluded?: boolean;
}

/** How {@link numberOption} states its range. */
function rangeText({ min, max, minExcluded = false }: NumberRange): string {
  const lower = minExcluded ? `greater than ${min}` : `>= ${min}`;
  if (max === Infinity) return `${lower} (Infinity for no limit)`;
  return minExcluded ? `${lower} and at most ${max.toLocaleString('en-US')}` : `from ${min} to ${max.toLocaleString('en-US')}`;
}

/**
 * A number option (fractions allowed) within `range`, or `fallback` when undefined; NaN never
 * passes. An undefined `fallback` makes the option required.
 */
export function numberOption(where: string, path: string, value: unknown, fallback: number | undefined, range: NumberRange): number {
  const { min, max, minExcluded = false } = range;
  return numeric(
    where,
    path,
    value,
    fallback,
    (n) => n <= max && (minExcluded ? n > min : n >= min),
    () => `a number ${rangeText(range)}`,
  );
}

/** A boolean option, or `fallback` when undefined. */
export function booleanOption(where: string, path: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${label(where, path)} must be true or false, got ${describeValue(value)}`);
  return value;
}

/** One of `choices`, or `fallback` when undefined; a near miss gets a "did you mean". */
export function choiceOption<T extends string>(where: string, path: string, value: unknown, fallback: T, choices: readonly T[]): T {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return value as T;
  const hint = typeof value === 'string' ? didYouMean(value, choices) : '';
  throw new TypeError(`${label(where, path)} must be one of ${choices.join(', ')}, got ${describeValue(value)}${hint}`);
}

/**
 * A string option of at least `minLength` and at most `maxLength` characters, or `fallback` when
 * undefined (an undefined `fallback` leaves the option unset). `hint` says how to choose one.
 */
export function stringOption(
  where: string,
  path: string,
  value: unknown,
  fallback: string,
  minLength?: number,
  hint?: string,
  maxLength?: number,
): string;
export function stringOption(
  where: string,
  path: string,
  value: unknown,
  fallback: undefined,
  minLength?: number,
  hint?: string,
  maxLength?: number,
): string | undefined;
export function stringOption(
  where: string,
  path: string,
  value: unknown,
  fallback: string | undefined,
  minLength = 0,
  hint?: string,
  maxLength = Infinity,
): string | undefined {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && value.length > maxLength) {
    throw new TypeError(`${label(where, path)} must be a string of at most ${maxLength} characters, got ${value.length} characters`);
  }
  if (typeof value !== 'string' || value.length < minLength) {
    const what = minLength > 0 ? `a string of at least ${minLength} characters` : 'a string';
    // A short secret is not echoed: the message may reach a log.
    const got = typeof value === 'string' ? `${value.length} characters` : describeValue(value);
    throw new TypeError(`${label(where, path)} must be ${what}${aside(hint)}, got ${got}`);
  }
  return value;
}

/**
 * A function option, or `fallback` when undefined (an undefined `fallback` leaves the option
 * unset). `what` says what it is called for.
 */
export function functionOption<F extends (...args: never[]) => unknown>(
  where: string,
  path: string,
  value: unknown,
  fallback: F,
  what: string,
): F;
export function functionOption<F extends (...args: never[]) => unknown>(
  where: string,
  path: string,
  value: unknown,
  fallback: undefined,
  what: string,
): F | undefined;
export function functionOption<F extends (...args: never[]) => unknown>(
  where: string,
  path: string,
  value: unknown,
  fallback: F | undefined,
  what: string,
): F | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== 'function') throw new TypeError(`${label(where, path)} must be ${what}, got ${describeValue(value)}`);
  return value as F;
}

/** What a {@link resultCheckedOption} must return: checked when it is tried at creation and at every call. */
export interface ResultCheck<R> {
  /** Whether a result is good. */
  readonly valid: (result: unknown) => result is R;
  /** What a good result is, for messages: `"milliseconds since the epoch (a finite number)"`. */
  readonly expected: string;
}

/**
 * A function option without arguments that is cheap and pure (a clock): `fallback` when undefined
 * (trusted, used as it is), else the host's function behind a check of every result. It is called
 * once here, so a function that throws or returns a wrong value fails at creation; one that goes
 * wrong later throws at the call that uses it, an error naming the option and what it returned
 * (`option "now" of createIntrospectionState returned NaN; expected …`), never a bare
 * `Invalid time value` far from its cause. `what` says what the option must be.
 */
export function resultCheckedOption<R>(
  where: string,
  path: string,
  value: unknown,
  fallback: () => R,
  what: string,
  check: ResultCheck<R>,
): () => R {
  if (value === undefined) return fallback;
  const given = functionOption<() => unknown>(where, path, value, fallback, what);
  const named = `${where}: ${path}()`;
  const checked = (): R => {
    let result: unknown;
    try {
      result = given();
    } catch (err) {
      throw new Error(`${named} threw: ${cutText(errorMessage(err), MAX_ECHOED_MESSAGE)}`, { cause: err });
    }
    if (!check.valid(result)) throw new TypeError(`${named} returned ${describeValue(result)}; expected ${check.expected}`);
    return result;
  };
  checked();
  return checked;
}

/**
 * An array option whose every entry passes `isEntry`, or `fallback` when undefined (an undefined
 * `fallback` leaves the option unset). `what` names the entries (`"objects with a close()
 * method"`); the message says which entry is wrong.
 */
export function arrayOption<T>(
  where: string,
  path: string,
  value: unknown,
  fallback: readonly T[],
  isEntry: (entry: unknown) => entry is T,
  what: string,
): readonly T[];
export function arrayOption<T>(
  where: string,
  path: string,
  value: unknown,
  fallback: undefined,
  isEntry: (entry: unknown) => entry is T,
  what: string,
): readonly T[] | undefined;
export function arrayOption<T>(
  where: string,
  path: string,
  value: unknown,
  fallback: readonly T[] | undefined,
  isEntry: (entry: unknown) => entry is T,
  what: string,
): readonly T[] | undefined {
  if (value === undefined) return fallback;
  if (!Array.isArray(value)) throw new TypeError(`${label(where, path)} must be an array of ${what}, got ${describeValue(value)}`);
  const wrong = value.findIndex((entry) => !isEntry(entry));
  if (wrong >= 0) {
    throw new TypeError(`${label(where, path)} must be an array of ${what}; entry ${wrong} is ${describeValue(value[wrong])}`);
  }
  return value as readonly T[];
}

/** An `AbortSignal` option, or undefined. */
export function signalOption(where: string, path: string, value: unknown): AbortSignal | undefined {
  if (value === undefined || value instanceof AbortSignal) return value;
  throw new TypeError(`${label(where, path)} must be an AbortSignal (from new AbortController().signal), got ${describeValue(value)}`);
}

/**
 * Checks the state a helper is given as its first (or `position`) argument: it must have the
 * `needed` methods.
 * A forgotten state (`drain({ delayMs: 5 })`) is named as such at the call, not later as
 * `state.setShuttingDown is not a function`.
 */
export function checkStateArgument(where: string, state: unknown, needed: readonly string[], position: ArgumentPosition = 'first'): void {
  const record = typeof state === 'object' || typeof state === 'function' ? (state as Record<string, unknown> | null) : null;
  const missing = needed.filter((method) => typeof record?.[method] !== 'function');
  if (missing.length === 0) return;
  let got: string;
  if (record === null || missing.length < needed.length) {
    got = record === null ? describeValue(state) : `an object without ${missing.join(', ')}`;
  } else {
    const keys = Object.keys(record);
    const shown = keys.slice(0, 5).map((key) => cutText(key, 40));
    got = keys.length === 0 ? 'an empty object' : `an object with ${shown.join(', ')}${keys.length > 5 ? ', …' : ''}`;
  }
  throw new TypeError(`${where}: the ${position} argument must be the IntrospectionState (from createIntrospectionState()), got ${got}`);
}

/** Where a positional argument stands, as messages name it. */
export type ArgumentPosition = 'first' | 'second' | 'third';

/**
 * Refuses an options object given where a dependency goes: the call shape of 0.1, when the state,
 * the registry or the API client was an option (`createPipeline({ state })`,
 * `createControllerMetrics(registry, { prefix, state })`). `value` is taken for options when it is
 * an object that `isDependency` does not accept and that has at least one of `optionKeys` (the
 * factory's options, and the dependencies that used to be options). The message says where the
 * dependency and the options go now: `where: the second argument is the state (or undefined);
 * options come third: createControllerMetrics(registry, state, { prefix })`.
 */
export function refuseOptionsInPlace(
  where: string,
  value: unknown,
  isDependency: (value: unknown) => boolean,
  optionKeys: readonly string[],
  message: { readonly position: ArgumentPosition; readonly dependency: string; readonly options: ArgumentPosition; readonly call: string },
): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || isDependency(value)) return;
  if (!Object.keys(value).some((key) => optionKeys.includes(key))) return;
  throw new TypeError(
    `${where}: the ${message.position} argument is ${message.dependency}; options come ${message.options}: ${message.call}`,
  );
}

/** Where a factory takes its state, and the call that shows its new shape. */
export interface StatePlacement {
  /** Which argument the state is. */
  readonly position: 'first' | 'second';
  /** Whether `undefined` may stand for it. */
  readonly optional: boolean;
  /** The factory's options, by name: an object with one of them is options, not a state. */
  readonly optionKeys: readonly string[];
  /** The call in its new shape: `createPipeline(state, { metrics })`. */
  readonly call: string;
}

/**
 * Checks the state a factory takes as its `placement.position` argument, where 0.1 took options
 * (`createPipeline({ state })`): options given there (an object with none of the `needed` methods
 * and one of the option keys, or `state`) are refused with the call's new shape; anything else
 * must have the `needed` methods ({@link checkStateArgument}).
 */
export function checkStateInPlace(where: string, state: unknown, needed: readonly string[], placement: StatePlacement): void {
  const { position, optional, optionKeys, call } = placement;
  const isState = (value: unknown): boolean => needed.some((method) => typeof (value as Record<string, unknown>)[method] === 'function');
  refuseOptionsInPlace(where, state, isState, ['state', ...optionKeys], {
    position,
    dependency: optional ? 'the state (or undefined)' : 'the state',
    options: position === 'first' ? 'second' : 'third',
    call,
  });
  checkStateArgument(where, state, needed, position);
}

/** A value as a message shows it: strings quoted and cut, objects by their kind. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return quoteText(value, 40);
  if (value === null) return 'null';
  if (typeof value === 'object') return describeObject(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'bigint') return `the BigInt ${value}n`;
  return String(value);
}

/** An object by its kind; never throws, also for a revoked or hostile Proxy. */
function describeObject(value: object): string {
  try {
    if (Array.isArray(value)) return 'an array';
    if (value instanceof Promise) return 'a promise';
    if (value instanceof Map) return 'a Map';
    if (value instanceof Set) return 'a Set';
  } catch {
    // A Proxy whose traps throw, or a revoked one: an object all the same.
  }
  return 'an object';
}
