/**
 * What the families read from the host's state at scrape time, checked before a family is filled
 * from it. A callback that throws, or answers a wrong value, throws here an error that names the
 * callback and what it answered (`state.resourceCounts() returned null; expected …`): that family
 * is left out of the scrape and the error reported (the router's `onError`), the rest is served.
 * Nothing a callback answers is trusted for its shape: null, a number, an array, a Map, a getter or
 * Proxy that throws, counts that are NaN, negative or strings.
 */
import { describeValue } from '../options';
import { resourceCountEntries, type CountsSource } from '../state/resource-counts';
import type { ReadinessGateStatus } from '../state/types';
import { cutText, MAX_ECHOED_MESSAGE } from '../util/cut-text';
import { errorMessage } from '../util/error-message';
import type { MetricsStateSource } from './options';

/** Most entries a list callback (`readinessGates()`, `progress()`) may answer: each is a series. */
export const MAX_HOST_ENTRIES = 10_000;

/** `call()`, a throw becoming an error that names the callback, with the host's error as its cause. */
function callHost<T>(name: string, call: () => T): T {
  try {
    return call();
  } catch (err) {
    throw new Error(`${name} threw: ${cutText(errorMessage(err), MAX_ECHOED_MESSAGE)}`, { cause: err });
  }
}

/** Reads `read()` from a value the host answered; a getter or Proxy that throws is named as such. */
function readAnswer<T>(name: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    throw new Error(`reading what ${name} returned threw: ${cutText(errorMessage(err), MAX_ECHOED_MESSAGE)}`, { cause: err });
  }
}

function returned(name: string, got: string, expected: string): TypeError {
  return new TypeError(`${name} returned ${got}; expected ${expected}`);
}

const RESOURCE_COUNTS = 'state.resourceCounts()';
const COUNTS_READ: CountsSource = {
  whole: (got, expected) => returned(RESOURCE_COUNTS, got, expected).message,
  entry: (type, got, expected) => returned(RESOURCE_COUNTS, `${got} as the count of ${type}`, expected).message,
  unreadable: (message) => `reading what ${RESOURCE_COUNTS} returned threw: ${message}`,
};

/** `state.resourceCounts()` as `[type, count]` pairs, checked. */
export function readResourceCounts(state: MetricsStateSource): Array<[string, number]> {
  return resourceCountEntries(
    callHost(RESOURCE_COUNTS, () => state.resourceCounts()),
    COUNTS_READ,
  );
}

const EVENT_STATS = 'state.eventStats()';

/**
 * One count of `state.eventStats()`, checked: a finite number `>= 0`. `watchers` may be left out
 * (a host's own state may not count watches): then 0.
 */
export function readEventStat(state: MetricsStateSource, field: 'published' | 'subscribers' | 'watchers'): number {
  const stats: unknown = callHost(EVENT_STATS, () => state.eventStats());
  if (typeof stats !== 'object' || stats === null || Array.isArray(stats)) {
    throw returned(EVENT_STATS, describeValue(stats), '{ published, subscribers } counts');
  }
  const value = readAnswer(EVENT_STATS, () => (stats as Record<string, unknown>)[field]);
  if (value === undefined && field === 'watchers') return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw returned(EVENT_STATS, `${field}: ${describeValue(value)}`, `${field} to be a finite number >= 0`);
  }
  return value;
}

/**
 * The entries of a list callback, each an object read by `convert`: what the family needs of it,
 * or a string describing what is wrong with it.
 */
function readList<T extends object>(
  name: string,
  call: () => unknown,
  expected: string,
  convert: (entry: Readonly<Record<string, unknown>>) => T | string,
): T[] {
  const list = callHost(name, call);
  if (!readAnswer(name, () => Array.isArray(list))) throw returned(name, describeValue(list), `an array of ${expected}`);
  const entries = list as unknown[];
  const length = readAnswer(name, () => entries.length);
  if (length > MAX_HOST_ENTRIES)
    throw returned(name, `an array of ${length} entries`, `at most ${MAX_HOST_ENTRIES.toLocaleString('en-US')}`);
  const read: T[] = [];
  for (let i = 0; i < length; i += 1) {
    const converted = readAnswer(name, () => {
      const entry = entries[i];
      return typeof entry === 'object' && entry !== null ? convert(entry as Record<string, unknown>) : describeValue(entry);
    });
    if (typeof converted === 'string') throw returned(name, `${converted} as entry ${i}`, expected);
    read.push(converted);
  }
  return read;
}

/** A gate or activity name, as a label value: a non-empty string. */
function isName(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/** One readiness gate as the gauge reads it. */
export type GateReading = Pick<ReadinessGateStatus, 'name' | 'open'>;

/** `state.readinessGates()`, checked: `{ name, open }` entries. */
export function readReadinessGates(state: MetricsStateSource): GateReading[] {
  return readList(
    'state.readinessGates()',
    () => state.readinessGates!(),
    '{ name: string, open: boolean }',
    ({ name, open }) => {
      if (!isName(name)) return `a gate named ${describeValue(name)}`;
      return typeof open === 'boolean' ? { name, open } : `open: ${describeValue(open)}`;
    },
  );
}

/** One activity's last progress, in Unix seconds. */
export interface ProgressReading {
  /** The activity: the series' label value. */
  readonly activity: string;
  /** When it last progressed, in seconds since the epoch. */
  readonly seconds: number;
}

/** `state.progress()`, checked: `{ activity, at }` entries whose `at` is a timestamp. */
export function readProgress(state: MetricsStateSource): ProgressReading[] {
  return readList(
    'state.progress()',
    () => state.progress!(),
    '{ activity: string, at: an ISO 8601 timestamp }',
    ({ activity, at }) => {
      if (!isName(activity)) return `an activity named ${describeValue(activity)}`;
      const ms = typeof at === 'string' ? Date.parse(at) : NaN;
      return Number.isNaN(ms) ? `at: ${describeValue(at)}` : { activity, seconds: ms / 1000 };
    },
  );
}
