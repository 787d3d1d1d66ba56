/**
 * Label sets written the way prom-client's `registry.metrics()` writes them. prom-client merges
 * the registry's default labels into each sample's own labels (`{...own, ...defaults, ...own}`:
 * own names first in their order, own values win, then the defaults the sample lacks), drops the
 * names its series labels (`sharedLabels`) carry, and appends those series labels. The helpers
 * below produce the same text without building the merged objects. Every name goes through the
 * scrape's {@link NameWriter} and every value through `labelValue`, whatever the host put there.
 */
import type { LabelSet } from './internals';
import { labelValue, readLabel } from './dialect';
import type { NameWriter } from './name-writer';
import type { ChunkSink } from './sink';

const hasOwn = Object.prototype.hasOwnProperty;

/** The registry's default labels, each already written as `name="value"` (the name as the host gave it first). */
export type DefaultPairs = ReadonlyArray<readonly [name: string, pair: string]>;

/** `name="value"`, for the label `name` of `labels`. */
function pairOf(names: NameWriter, labels: LabelSet, name: string): string {
  return `${names.label(name)}="${labelValue(readLabel(labels, name))}"`;
}

/** Writes the default labels once per scrape. */
export function defaultPairs(defaults: LabelSet | undefined, names: NameWriter): DefaultPairs {
  if (defaults === undefined) return [];
  return Object.keys(defaults).map((name) => [name, pairOf(names, defaults, name)] as const);
}

/** `name="value"` pairs of `labels`, comma-joined in the set's own order; `''` for none. */
export function labelText(labels: LabelSet | null | undefined, names: NameWriter): string {
  if (labels === null || labels === undefined) return '';
  let text = '';
  for (const name of Object.keys(labels)) {
    const pair = pairOf(names, labels, name);
    text = text === '' ? pair : `${text},${pair}`;
  }
  return text;
}

/**
 * The default labels that `labels` does not have and that are not `reserved` (the `le` or
 * `quantile` a sample adds), comma-joined; `''` for none.
 */
export function missingDefaults(defaults: DefaultPairs, labels: LabelSet | null | undefined, reserved?: string): string {
  let text = '';
  for (let i = 0; i < defaults.length; i += 1) {
    const [name, pair] = defaults[i]!;
    if (name === reserved || (labels !== null && labels !== undefined && hasOwn.call(labels, name))) continue;
    text = text === '' ? pair : `${text},${pair}`;
  }
  return text;
}

/**
 * The default pair that stands for `labels`' own `name` when `nullishDefaults` (the registry's
 * defaults, given only for `@prometheus-io/client`, whose rendering fills a default into a label
 * that is `null` or `undefined`, in its place) has one and the value is nullish; else undefined.
 */
function defaultInPlace(nullishDefaults: DefaultPairs | undefined, labels: LabelSet, name: string): string | undefined {
  if (nullishDefaults === undefined || nullishDefaults.length === 0) return undefined;
  const value = readLabel(labels, name);
  if (value !== null && value !== undefined) return undefined;
  for (const [defaultName, pair] of nullishDefaults) if (defaultName === name) return pair;
  return undefined;
}

/**
 * Puts `labels`' pairs into `sink`, the first after `separator` (`{` to open the set), the others
 * after commas. Returns the separator for what follows: still `separator` when nothing was put.
 * With `nullishDefaults`, a label whose value is null or undefined is written with its default.
 */
export function putLabels(
  sink: ChunkSink,
  names: NameWriter,
  labels: LabelSet | null | undefined,
  separator: string,
  nullishDefaults?: DefaultPairs,
): string {
  if (labels === null || labels === undefined) return separator;
  let next = separator;
  // for...in reads V8's enum cache without allocating a key array per series; own names only, as Object.entries.
  for (const name in labels) {
    if (!hasOwn.call(labels, name)) continue;
    sink.put(next);
    const inPlace = defaultInPlace(nullishDefaults, labels, name);
    if (inPlace !== undefined) {
      sink.put(inPlace);
    } else {
      sink.put(names.label(name));
      sink.put('="');
      sink.put(labelValue(readLabel(labels, name)));
      sink.put('"');
    }
    next = ',';
  }
  return next;
}

/** {@link missingDefaults}, put into `sink` the way {@link putLabels} puts labels. */
export function putMissingDefaults(
  sink: ChunkSink,
  defaults: DefaultPairs,
  labels: LabelSet | null | undefined,
  separator: string,
): string {
  let next = separator;
  for (let i = 0; i < defaults.length; i += 1) {
    const [name, pair] = defaults[i]!;
    if (labels !== null && labels !== undefined && hasOwn.call(labels, name)) continue;
    sink.put(next);
    sink.put(pair);
    next = ',';
  }
  return next;
}

/** Joins label texts with commas, skipping empty ones. */
export function joinLabels(first: string, second: string, third = ''): string {
  let text = first;
  if (second !== '') text = text === '' ? second : `${text},${second}`;
  if (third !== '') text = text === '' ? third : `${text},${third}`;
  return text;
}

/** `{labels}` or nothing. */
export function braces(text: string): string {
  return text === '' ? '' : `{${text}}`;
}

/**
 * The general case, for values read through a metric's public `get()`: `own` merged with the
 * defaults, minus the names in `shared`, then `shared`, exactly as prom-client's formatter does.
 */
export function mergedLabelText(
  own: LabelSet | null | undefined,
  defaults: DefaultPairs,
  shared: LabelSet | null | undefined,
  names: NameWriter,
  nullishDefaults?: DefaultPairs,
): string {
  const isShared = (name: string) => shared !== null && shared !== undefined && hasOwn.call(shared, name);
  let text = '';
  if (own !== null && own !== undefined) {
    for (const name of Object.keys(own)) {
      if (isShared(name)) continue;
      const pair = defaultInPlace(nullishDefaults, own, name) ?? pairOf(names, own, name);
      text = text === '' ? pair : `${text},${pair}`;
    }
  }
  for (let i = 0; i < defaults.length; i += 1) {
    const [name, pair] = defaults[i]!;
    if (isShared(name) || (own !== null && own !== undefined && hasOwn.call(own, name))) continue;
    text = text === '' ? pair : `${text},${pair}`;
  }
  return joinLabels(text, labelText(shared, names));
}
