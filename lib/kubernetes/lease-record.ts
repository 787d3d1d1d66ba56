/**
 * A Lease as the API server stores it. The elector reads every field it relies on through
 * {@link readLeaseRecord}, so that a field no API server would answer (a `leaseDurationSeconds` of
 * `NaN`, `"abc"` or `1e12`, a `leaseTransitions` of `"5"`, a time that is no time) is an error, as
 * it is for client-go, which cannot decode it: never a takeover, never a silent wait.
 */
import { describeValue } from '../options';
import type { LeaseObject } from './lease-api';

/** The largest int32: the API server stores `leaseDurationSeconds` and `leaseTransitions` as int32. */
export const INT32_MAX = 2_147_483_647;

/**
 * The longest `holderIdentity` the elector accepts, in the Lease and as its own `identity`: ample
 * for a pod name (253) with a suffix, small enough to show in an event or a variable.
 */
export const MAX_IDENTITY_LENGTH = 1024;

/** The longest `resourceVersion`, `preferredHolder` or `strategy` accepted (an etcd revision has 20 digits at most). */
const MAX_TEXT_LENGTH = 1024;

/** Longer than any RFC 3339 time (35 characters with nine fractional digits and an offset). */
const MAX_TIME_LENGTH = 64;

/**
 * RFC 3339 as Go's `time.Parse` reads a MicroTime: upper-case `T` and `Z`, up to nine fractional
 * digits, an offset in hours and minutes. The fields' ranges are checked after the match.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** The election record of a valid Lease, as the elector uses it. */
export interface LeaseRecord {
  /** `spec.holderIdentity`; empty when absent (a free Lease). */
  readonly holder: string;
  /** `spec.leaseDurationSeconds`; `undefined` when absent. */
  readonly durationSeconds: number | undefined;
  /** `spec.leaseTransitions`; `undefined` when absent. */
  readonly transitions: number | undefined;
  /**
   * The record as one string: a change of it restarts the holder's lease on the observer's
   * clock, as client-go compares the raw records it reads.
   */
  readonly key: string;
}

/** A Lease whose fields no API server would store: what is wrong, one entry a field. */
export class InvalidLeaseError extends Error {
  /** One sentence a field, naming it (`spec.leaseDurationSeconds must be …`). */
  readonly problems: readonly string[];

  /** @param problems - What is wrong, one sentence a field. */
  constructor(problems: readonly string[]) {
    super(`invalid Lease, left alone: ${problems.join('; ')}`);
    this.name = 'InvalidLeaseError';
    this.problems = problems;
  }
}

/** Whether `value` is a `Date`, of this realm or another (a `vm` context, a test runner's). */
export function isDate(value: unknown): value is Date {
  return Object.prototype.toString.call(value) === '[object Date]';
}

/** The time of a `Date` (of any realm), `NaN` for an invalid one. */
function timeOf(value: Date): number {
  return Date.prototype.getTime.call(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !isDate(value);
}

/** What a field held, for a message: a long string by its length, never its megabytes. */
function got(value: unknown): string {
  if (typeof value === 'string' && value.length > 40) return `a string of ${value.length} characters`;
  if (isDate(value)) return Number.isNaN(timeOf(value)) ? 'an invalid Date' : `the Date ${new Date(timeOf(value)).toISOString()}`;
  return describeValue(value);
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Whether `text` is an RFC 3339 time whose every field is in range (`2024-02-30` is not). */
export function isRfc3339(text: string): boolean {
  if (text.length > MAX_TIME_LENGTH) return false;
  const match = RFC3339.exec(text);
  if (match === null) return false;
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = match.slice(1).map((part) => Number(part ?? 0));
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    offsetHours <= 23 &&
    offsetMinutes <= 59
  );
}

/** A MicroTime field: absent, a valid `Date` (a client that parses times), or RFC 3339 text (client-node 1.x). */
function checkTime(path: string, value: unknown, problems: string[]): string {
  if (value === undefined) return '';
  if (isDate(value) && !Number.isNaN(timeOf(value))) return new Date(timeOf(value)).toISOString();
  if (typeof value === 'string' && isRfc3339(value)) return value;
  problems.push(`${path} must be an RFC 3339 time (a MicroTime), got ${got(value)}`);
  return '';
}

/** An int32 field from `min`: absent, or an integer in range (a string, a fraction, NaN are not). */
function checkInt32(path: string, value: unknown, min: number, problems: string[]): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= INT32_MAX) return value;
  problems.push(`${path} must be an integer from ${min} to ${INT32_MAX}, got ${got(value)}`);
  return undefined;
}

/** A text field: absent (`''`), or a string of at most `max` characters (`min` at least). */
function checkText(path: string, value: unknown, max: number, problems: string[], min = 0): string {
  if (value === undefined && min === 0) return '';
  if (typeof value === 'string' && value.length >= min && value.length <= max) return value;
  const what = min > 0 ? `a non-empty string of at most ${max} characters` : `a string of at most ${max} characters`;
  problems.push(`${path} must be ${what}, got ${got(value)}`);
  return '';
}

/** A field that, when present, must be `expected`. */
function checkEqual(path: string, value: unknown, expected: string, problems: string[]): void {
  if (value !== undefined && value !== expected) problems.push(`${path} must be ${JSON.stringify(expected)}, got ${got(value)}`);
}

/**
 * Reads what the Lease API answered for the Lease `namespace/name` as the API server would store
 * it: an object with `metadata.resourceVersion` (a non-empty string) and a `spec` object whose
 * `holderIdentity` is a string of at most {@link MAX_IDENTITY_LENGTH} characters,
 * `leaseDurationSeconds` an integer from 1 to {@link INT32_MAX}, `leaseTransitions` one from 0,
 * `acquireTime` and `renewTime` RFC 3339 times or valid `Date`s; each may be absent, `null` never
 * is (the API server omits an unset field). Only reads, never writes, what it is given.
 *
 * @throws InvalidLeaseError naming every field that is not so.
 */
export function readLeaseRecord(value: unknown, expected: { namespace: string; name: string }): LeaseRecord {
  if (!isRecord(value)) throw new InvalidLeaseError([`the Lease API answered ${got(value)}, not a Lease object`]);
  const problems: string[] = [];
  checkEqual('apiVersion', value.apiVersion, 'coordination.k8s.io/v1', problems);
  checkEqual('kind', value.kind, 'Lease', problems);
  const metadata = value.metadata;
  if (isRecord(metadata)) {
    checkEqual('metadata.name', metadata.name, expected.name, problems);
    checkEqual('metadata.namespace', metadata.namespace, expected.namespace, problems);
    checkText('metadata.resourceVersion', metadata.resourceVersion, MAX_TEXT_LENGTH, problems, 1);
  } else problems.push(`metadata must be an object, got ${got(metadata)}`);
  const spec = value.spec;
  if (!isRecord(spec)) {
    problems.push(`spec must be an object, got ${got(spec)}`);
    throw new InvalidLeaseError(problems);
  }
  const holder = checkText('spec.holderIdentity', spec.holderIdentity, MAX_IDENTITY_LENGTH, problems);
  const durationSeconds = checkInt32('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 1, problems);
  const transitions = checkInt32('spec.leaseTransitions', spec.leaseTransitions, 0, problems);
  const acquireTime = checkTime('spec.acquireTime', spec.acquireTime, problems);
  const renewTime = checkTime('spec.renewTime', spec.renewTime, problems);
  const preferredHolder = checkText('spec.preferredHolder', spec.preferredHolder, MAX_IDENTITY_LENGTH, problems);
  const strategy = checkText('spec.strategy', spec.strategy, MAX_TEXT_LENGTH, problems);
  if (problems.length > 0) throw new InvalidLeaseError(problems);
  const key = JSON.stringify([holder, durationSeconds ?? null, acquireTime, renewTime, transitions ?? null, preferredHolder, strategy]);
  return { holder, durationSeconds, transitions, key };
}

/** The body the elector writes: `lease` with `spec` replaced by a copy with `changes`; `lease` itself is left as it is. */
export function withSpec(lease: LeaseObject, changes: NonNullable<LeaseObject['spec']>): LeaseObject {
  return { ...lease, spec: { ...lease.spec, ...changes } };
}
