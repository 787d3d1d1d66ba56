import { goJsonPieces, JsonSerializationError, type GoJsonText } from '../json-stream';
import { cooperativeTicker } from '../util/cooperative';
import { JsonPathError, limitError, quoteForMessage } from './errors';
import { NO_VALUE, isAbsent } from './value';

/*
 * Text output as `kubectl -o jsonpath` prints it: scalars with Go's `fmt.Print`, objects and arrays
 * as Go's `json.Marshal` writes them (compact, keys sorted, `<` `>` `&` U+2028 U+2029 escaped:
 * written by the one serializer, json-stream, in its Go dialect), the values of one action joined
 * by a space. One deliberate difference: an integer-valued number prints in full (`1234567`), where
 * Go prints a float64 as `1.234567e+06`.
 */

/** Go's `%v` for a float64, except that integers below 1e21 print in full. */
export function formatNumber(value: number): string {
  if (Object.is(value, -0)) return '-0';
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return String(value);
  // The shortest round-trip digits are the same in Go and JavaScript; only the layout differs:
  // Go's %v switches to an exponent from 1e6 up and below 1e-4, padding it to two digits.
  const [mantissa, exponentText] = value.toExponential().split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return String(value);
}

/** Counts output against the byte limit while it is produced, so a huge value is refused early. */
class OutputBudget {
  private bytes = 0;
  constructor(
    readonly maxBytes: number,
    private readonly template: string,
  ) {}

  /** Adds a piece of this many UTF-8 bytes. */
  add(bytes: number): void {
    this.bytes += bytes;
    if (this.bytes > this.maxBytes) throw this.overflow();
  }

  /** How many more bytes may be written. */
  remaining(): number {
    return this.maxBytes - this.bytes;
  }

  /** The error for output over the limit. */
  overflow(): JsonPathError {
    return limitError('limit', this.template, `its output is larger than ${this.maxBytes} bytes`);
  }
}

function cyclic(template: string): JsonPathError {
  return new JsonPathError(
    'type',
    template,
    'the selected value contains a reference cycle',
    `JSONPath template ${quoteForMessage(template)} selected a value that contains a reference cycle and cannot be printed`,
  );
}

/** One selected scalar as `kubectl -o jsonpath` prints it (strings bare, numbers as Go prints a float64). */
function printScalar(value: unknown): string {
  if (value === NO_VALUE) return '<no value>';
  if (value === null || isAbsent(value)) return 'null';
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      return formatNumber(value);
    case 'bigint':
      return value.toString();
    default:
      return value ? 'true' : 'false';
  }
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

/**
 * An object or array as Go's `json.Marshal` writes it, in slices that share the event loop (a
 * 10 MB subtree printed in one go held it for most of a second), within what is left of the budget.
 */
async function printContainer(
  value: object,
  budget: OutputBudget,
  template: string,
  tick: () => Promise<void> | undefined,
): Promise<GoJsonText> {
  let text: GoJsonText | undefined;
  try {
    text = await goJsonPieces(value, { maxBytes: budget.remaining(), tick });
  } catch (err) {
    // A cycle is the template's doing (it selected a value that cannot be printed), not the host's.
    if (err instanceof JsonSerializationError && err.reason === 'cycle') throw cyclic(template);
    throw err;
  }
  if (text === undefined) throw budget.overflow();
  return text;
}

/**
 * Prints every result group, as `kubectl -o jsonpath` does: values of one group joined by a space,
 * groups back to back. The text comes in the pieces it was written in, for the caller to send
 * without joining them; a container selected many times is written once. Aborting `signal` (the
 * client went away) stops the printing at its next yield, rejecting with the signal's reason.
 */
export async function printResults(
  groups: readonly (readonly unknown[])[],
  maxOutputBytes: number,
  template: string,
  signal?: AbortSignal,
): Promise<string[]> {
  // Every call below is a whole slice (thousands of values): the clock is read after each one.
  const tick = cooperativeTicker(undefined, 1, signal);
  const budget = new OutputBudget(maxOutputBytes, template);
  const printed = new Map<object, GoJsonText>();
  const parts: string[] = [];
  for (const group of groups) {
    for (let i = 0; i < group.length; i++) {
      const value = group[i];
      if (isContainer(value)) {
        let text = printed.get(value);
        if (text === undefined) {
          text = await printContainer(value, budget, template, tick);
          printed.set(value, text);
        }
        budget.add(text.bytes);
        parts.push(...text.pieces);
      } else {
        const text = printScalar(value);
        budget.add(Buffer.byteLength(text, 'utf8'));
        parts.push(text);
      }
      if (i < group.length - 1) {
        budget.add(1);
        parts.push(' ');
      }
      // Between values too: a small object is printed in one step that never yields, and 10 000
      // of 2.5 KB each took one turn of 150-340 ms together (now 11-15 ms turns, on a busy machine).
      const pause = tick();
      if (pause) await pause;
    }
  }
  return parts;
}
