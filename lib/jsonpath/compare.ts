import { compareCodePoints } from '../json-stream/go';
import { describeKind } from './value';

/**
 * Filter comparisons, with the reference engine's rules (text/template's `eq`, `lt`…): only
 * booleans, numbers and strings compare; booleans only for (in)equality; strings byte-wise, which
 * for UTF-8 is code point order. One deliberate difference: any two numbers compare numerically,
 * where the reference refuses to compare an integer with a float.
 */

/** The outcome of one comparison: whether the element passes, or why it cannot be compared. */
export type ComparisonOutcome = { readonly pass: boolean; readonly error?: undefined } | { readonly error: string };

type Comparable = 'boolean' | 'number' | 'string';

function comparableKind(value: unknown): Comparable | undefined {
  switch (typeof value) {
    case 'boolean':
      return 'boolean';
    case 'number':
    case 'bigint':
      return 'number';
    case 'string':
      return 'string';
    default:
      return undefined;
  }
}

/**
 * Characters of a string comparison charged as one evaluation step. A step (visiting a value)
 * costs tens of nanoseconds; comparing two long strings with a shared prefix costs about as much
 * per few dozen characters. Charged by the shorter string, which bounds the characters compared.
 */
const CHARS_PER_STEP = 32;

/** Evaluation steps one comparison of `left` and `right` costs beyond the step of visiting them. */
export function comparisonSteps(left: unknown, right: unknown): number {
  if (typeof left !== 'string' || typeof right !== 'string') return 0;
  return Math.floor(Math.min(left.length, right.length) / CHARS_PER_STEP);
}

function invalid(value: unknown): string {
  return `invalid type for comparison: ${describeKind(value)}`;
}

function kinds(left: unknown, right: unknown): Comparable | string {
  const l = comparableKind(left);
  if (l === undefined) return invalid(left);
  const r = comparableKind(right);
  if (r === undefined) return invalid(right);
  if (l !== r) return `incompatible types for comparison: ${l} and ${r}`;
  return l;
}

type Verdict = boolean | string;

function equal(left: unknown, right: unknown): Verdict {
  const kind = kinds(left, right);
  if (kind !== 'boolean' && kind !== 'number' && kind !== 'string') return kind;
  // Loose equality is wanted for number/bigint pairs only; other kinds are already the same type.
  return kind === 'number' ? (left as number) == (right as number) : left === right;
}

function less(left: unknown, right: unknown): Verdict {
  const kind = kinds(left, right);
  if (kind === 'boolean') return invalid(left);
  if (kind === 'number') return (left as number) < (right as number);
  if (kind === 'string') return compareCodePoints(left as string, right as string) < 0;
  return kind;
}

function lessOrEqual(left: unknown, right: unknown): Verdict {
  const lt = less(left, right);
  if (lt !== false) return lt;
  return equal(left, right);
}

function negate(verdict: Verdict): Verdict {
  return typeof verdict === 'string' ? verdict : !verdict;
}

/** Applies a filter operator to one left and one right value. */
export function compareValues(operator: string, left: unknown, right: unknown): ComparisonOutcome {
  let verdict: Verdict;
  switch (operator) {
    case '<':
      verdict = less(left, right);
      break;
    case '>':
      verdict = negate(lessOrEqual(left, right));
      break;
    case '==':
      verdict = equal(left, right);
      break;
    case '!=':
      verdict = negate(equal(left, right));
      break;
    case '<=':
      verdict = lessOrEqual(left, right);
      break;
    case '>=':
      verdict = negate(less(left, right));
      break;
    default:
      return { error: `unrecognized filter operator ${operator}` };
  }
  return typeof verdict === 'string' ? { error: verdict } : { pass: verdict };
}
