/**
 * Options declared once. A factory lists its options in one object (name → kind, range, default)
 * and {@link optionSpec} derives from it everything else: the known keys and their "did you mean",
 * nested groups and the paths their messages name, the defaults applied, and the frozen
 * `*_DEFAULTS` object the factory exports. The checks themselves are the helpers of `./index`, so
 * every factory answers a mistake with the same message.
 */

import { arrayOption, booleanOption, checkOptionObject, choiceOption, functionOption, integerOption, stringOption } from './index';

/** What the check of one option is given when its factory resolves its options. */
export interface OptionInput<D> {
  /** The factory, as messages name it (`createIntrospectionRouter`). */
  readonly where: string;
  /** The option's full path, as messages name it (`limits.maxEventLimit`). */
  readonly path: string;
  /** The value given; `undefined` when the option was left out. */
  readonly value: unknown;
  /** The declared default (`undefined` for an option without one). */
  readonly fallback: D;
}

/**
 * One declared option: its default, as the factory's `*_DEFAULTS` object shows it (`undefined`
 * for an option without one, which the object leaves out), and how a given value resolves.
 */
export interface OptionEntry<T, D> {
  /** The default; `undefined` when the option has none. */
  readonly fallback: D;
  /** The value the factory runs with, from what was given; throws a `TypeError` on a wrong one. */
  resolve(input: OptionInput<D>): T;
}

/** A factory's declaration: every option it takes, by name. */
export type OptionEntries = Readonly<Record<string, OptionEntry<unknown, unknown>>>;

/** What a declaration resolves to: every option, checked, with its default applied. */
export type ResolvedOptions<S extends OptionEntries> = { readonly [K in keyof S]: ReturnType<S[K]['resolve']> };

/**
 * `true` when a factory's public options interface `Public` and its declaration's resolved options
 * `Resolved` name the same options, else `never`: `const check: SameOptions<A, B> = true` in the
 * factory's file makes an option added to one and not the other a compile error.
 */
export type SameOptions<Public, Resolved> = [Exclude<keyof Public, keyof Resolved>, Exclude<keyof Resolved, keyof Public>] extends [
  never,
  never,
]
  ? true
  : never;

/** A factory's options, declared once: its defaults and how to resolve what a caller gives. */
export interface OptionSpec<S extends OptionEntries> {
  /** The factory, as messages name it. */
  readonly where: string;
  /** Every option's name, in the order declared. */
  readonly keys: readonly string[];
  /** Every default of the declaration (options without one left out), frozen: the factory's `*_DEFAULTS`. */
  readonly defaults: { readonly [K in keyof S as undefined extends S[K]['fallback'] ? never : K]: S[K]['fallback'] };
  /**
   * Checks `options` (a plain object or undefined, with known keys only, at every level) and
   * answers every option resolved, defaults applied. Throws a `TypeError` naming the factory and
   * the option's full path on the first mistake. `as` names another factory and path for options
   * that are also an option of another factory (`createIntrospectionRouter`'s `pprof`).
   */
  resolve(options: unknown, as?: { readonly where: string; readonly path: string }): ResolvedOptions<S>;
}

/** `path.key`, or `key` at the top level. */
function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** The defaults of `entries`: every option that has one, frozen. */
function defaultsOf(entries: OptionEntries): Readonly<Record<string, unknown>> {
  const defaults: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(entries)) if (entry.fallback !== undefined) defaults[key] = entry.fallback;
  return Object.freeze(defaults);
}

/** `options` checked against `entries` at `path`, each option resolved in the order declared. */
function resolveEntries(where: string, path: string, entries: OptionEntries, options: unknown): Record<string, unknown> {
  const given = checkOptionObject(where, path, options, Object.keys(entries));
  const resolved: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(entries)) {
    resolved[key] = entry.resolve({ where, path: join(path, key), value: given[key], fallback: entry.fallback });
  }
  return resolved;
}

/**
 * Declares the options of the factory `where`. `path` is where they sit in messages: `''` for a
 * factory's own options, `'pprof'` for options that are also an option of another factory.
 */
export function optionSpec<const S extends OptionEntries>(where: string, entries: S, path = ''): OptionSpec<S> {
  return {
    where,
    keys: Object.freeze(Object.keys(entries)),
    defaults: defaultsOf(entries) as OptionSpec<S>['defaults'],
    resolve: (options, as) => resolveEntries(as?.where ?? where, as?.path ?? path, entries, options) as ResolvedOptions<S>,
  };
}

/** The range of an {@link integer} option, and what its number means when its name does not say. */
export interface IntegerRange {
  /** The least value. */
  readonly min: number;
  /** The greatest value. */
  readonly max: number;
  /** Said in the message after the range: `"milliseconds, required"`. */
  readonly hint?: string;
}

/** An integer within `range`; an `undefined` fallback makes it required. */
export function integer<const D extends number | undefined>(fallback: D, range: IntegerRange): OptionEntry<number, D> {
  return { fallback, resolve: (i) => integerOption(i.where, i.path, i.value, i.fallback, range.min, range.max, range.hint) };
}

/** `true` or `false`. */
export function boolean(fallback: boolean): OptionEntry<boolean, boolean> {
  return { fallback, resolve: (i) => booleanOption(i.where, i.path, i.value, i.fallback) };
}

/** One of `choices`; a near miss gets a "did you mean". */
export function choice<T extends string>(fallback: NoInfer<T>, choices: readonly T[]): OptionEntry<T, T> {
  return { fallback, resolve: (i) => choiceOption(i.where, i.path, i.value, i.fallback, choices) };
}

/** A string of at least `minLength` characters. */
export function string(fallback: string, minLength = 0): OptionEntry<string, string> {
  return { fallback, resolve: (i) => stringOption(i.where, i.path, i.value, i.fallback, minLength) };
}

/** An array whose every entry passes `isEntry`; `what` names the entries (`"strings or RegExps"`). */
export function array<T>(
  fallback: readonly T[],
  isEntry: (entry: unknown) => entry is T,
  what: string,
): OptionEntry<readonly T[], readonly T[]> {
  return { fallback, resolve: (i) => arrayOption(i.where, i.path, i.value, i.fallback, isEntry, what) };
}

/** A function the host may give, without a default: `undefined` when left out. `what` says what it must be. */
export function callback<F extends (...args: never[]) => unknown>(what: string): OptionEntry<F | undefined, undefined> {
  return { fallback: undefined, resolve: (i) => functionOption<F>(i.where, i.path, i.value, undefined, what) };
}

/**
 * An option whose check is its own (an options object of another factory, a clock whose readings
 * are checked): `resolve` gets the value given (also when left out) and the declared `fallback`.
 */
export function custom<T, D>(fallback: D, resolve: (input: OptionInput<D>) => T): OptionEntry<T, D> {
  return { fallback, resolve };
}

/**
 * An option the factory checks itself after the others, because its range or default depends on
 * them: declared here for its name and its default (if any), resolved to the value given.
 */
export function later<const D = undefined>(fallback?: D): OptionEntry<unknown, D> {
  return { fallback: fallback as D, resolve: (i) => i.value };
}

/** A nested group of options (`watch`, `limits`): an object of its own known keys, or omitted. */
export function group<const S extends OptionEntries>(entries: S): OptionEntry<ResolvedOptions<S>, OptionSpec<S>['defaults']> {
  return {
    fallback: defaultsOf(entries) as OptionSpec<S>['defaults'],
    resolve: (i) => resolveEntries(i.where, i.path, entries, i.value) as ResolvedOptions<S>,
  };
}
