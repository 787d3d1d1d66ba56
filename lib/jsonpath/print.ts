import { DEFAULT_JSON_BOUNDS } from '../json-stream';
import { JsonSerializationError } from '../json-stream/errors';
import { cooperativeTicker } from '../util/cooperative';
import { compareCodePoints } from './compare';
import { JsonPathError, limitError, quoteForMessage } from './errors';
import { NO_VALUE, isAbsent, isArrayLike } from './value';

/*
 * Text output as `kubectl -o jsonpath` prints it: scalars with Go's `fmt.Print`, objects and arrays
 * as Go's `json.Marshal` writes them (compact, keys sorted, `<` `>` `&` U+2028 U+2029 escaped),
 * the values of one action joined by a space. One deliberate difference: an integer-valued number
 * prints in full (`1234567`), where Go prints a float64 as `1.234567e+06`.
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

// Characters Go's encoder escapes, plus surrogates (checked for pairing on the slow path).
const NEEDS_ESCAPE = /["\\\u0000-\u001f<>&\u2028\u2029\ud800-\udfff]/;

const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  0x22: '\\"',
  0x5c: '\\\\',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
};

function unicodeEscape(code: number): string {
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

/** A JSON string literal as Go's encoder writes it; an unpaired surrogate becomes `\ufffd`, as invalid UTF-8 does in Go. */
export function quoteJsonString(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return `"${text}"`;
  let out = '"';
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    let replacement: string | undefined;
    if (code >= 0xd800 && code <= 0xdbff) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        i++;
        continue;
      }
      replacement = '\\ufffd';
    } else if (code >= 0xdc00 && code <= 0xdfff) {
      replacement = '\\ufffd';
    } else if (code < 0x20 || code === 0x22 || code === 0x5c) {
      replacement = SHORT_ESCAPES[code] ?? unicodeEscape(code);
    } else if (code === 0x3c || code === 0x3e || code === 0x26 || code === 0x2028 || code === 0x2029) {
      replacement = unicodeEscape(code);
    }
    if (replacement !== undefined) {
      out += text.slice(run, i) + replacement;
      run = i + 1;
    }
  }
  return `${out}${text.slice(run)}"`;
}

/** Applies `toJSON` as `JSON.stringify` would, so a `Date` prints as its ISO string. */
function resolveToJson(value: unknown, key: string | number): unknown {
  if (typeof value === 'object' && value !== null) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') return (toJSON as (key: string) => unknown).call(value, String(key));
  }
  return value;
}

function scalarJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return quoteJsonString(value);
    case 'number':
      // Go's encoder keeps the sign of -0, which JSON.stringify drops.
      return Object.is(value, -0) ? '-0' : Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      return value === null ? 'null' : undefined;
    case 'bigint':
      return value.toString();
    default:
      // undefined, functions, symbols (NO_VALUE included): JSON has them as null in arrays.
      return 'null';
  }
}

const HIGH_UNITS = /[\ud800-\uffff]/;

/** Go sorts keys by their UTF-8 bytes, i.e. code points; the native sort agrees unless a key has a character from U+D800 up. */
function sortedKeys(object: object): string[] {
  const keys = Object.keys(object);
  if (keys.length < 2) return keys;
  keys.sort();
  for (const key of keys) {
    if (HIGH_UNITS.test(key)) return keys.sort(compareCodePoints);
  }
  return keys;
}

/** Counts output against the byte limit while it is produced, so a huge value is refused early. */
export class OutputBudget {
  private units = 0;
  constructor(
    readonly maxBytes: number,
    private readonly template: string,
  ) {}

  /** Adds a piece; UTF-16 units never exceed UTF-8 bytes, so this only refuses output that is surely over. */
  add(units: number): void {
    this.units += units;
    if (this.units > this.maxBytes) throw this.overflow();
  }

  /** How many more UTF-16 units may be written before the output is surely over. */
  remaining(): number {
    return this.maxBytes - this.units;
  }

  /** The error for output over the limit. */
  overflow(): JsonPathError {
    return limitError('limit', this.template, `its output is larger than ${this.maxBytes} bytes`);
  }
}

/** The selected value nests past what the printer writes; like the dumps' bound, a fault of the data. */
function tooDeep(detail: string): JsonSerializationError {
  return new JsonSerializationError('$', 'too-deep', `${detail}; publish plain data`);
}

function cyclic(template: string): JsonPathError {
  return new JsonPathError(
    'type',
    template,
    'the selected value contains a reference cycle',
    `JSONPath template ${quoteForMessage(template)} selected a value that contains a reference cycle and cannot be printed`,
  );
}

const NOTHING = Symbol('nothing');

/** Below this depth containers are written by recursion (fast); deeper ones by an explicit stack (safe). */
const RECURSION_DEPTH = 200;

/** Writes compact JSON with Go's key order and escapes into `parts`, within an output budget. */
class JsonWriter {
  private readonly parts: string[] = [];
  private size = 0;

  constructor(
    private readonly limit: number,
    private readonly budget: OutputBudget,
    private readonly template: string,
  ) {}

  // Slices' output joined once per slice (by {@link flush}), so that the final join copies a few
  // hundred strings rather than millions of small pieces.
  private readonly chunks: string[] = [];

  /** Joins what was written since the last call into one string. */
  flush(): void {
    if (this.parts.length === 0) return;
    this.chunks.push(this.parts.join(''));
    this.parts.length = 0;
  }

  private push(piece: string): void {
    this.parts.push(piece);
    this.size += piece.length;
    if (this.size > this.limit) throw this.budget.overflow();
  }

  /** The text written so far. */
  text(): string {
    return this.pieces().join('');
  }

  /** The text written so far, in the pieces it was written in. */
  pieces(): string[] {
    this.flush();
    return this.chunks;
  }

  /** Writes one (already `toJSON`-resolved) value. A cycle cannot be met here: it nests without end and reaches `writeDeep`. */
  write(value: unknown, depth: number): void {
    const scalar = scalarJson(value);
    if (scalar !== undefined) {
      this.push(scalar);
      return;
    }
    if (depth >= RECURSION_DEPTH) {
      this.writeDeep(value as object);
      return;
    }
    if (isArrayLike(value)) {
      this.push('[');
      for (let i = 0; i < value.length; i++) {
        if (i > 0) this.push(',');
        this.write(resolveToJson(value[i], i), depth + 1);
      }
      this.push(']');
      return;
    }
    const object = value as Record<string, unknown>;
    let separator = '{';
    for (const key of sortedKeys(object)) {
      const member = resolveToJson(object[key], key);
      if (isAbsent(member)) continue;
      this.push(`${separator}${quoteJsonString(key)}:`);
      separator = ',';
      this.write(member, depth + 1);
    }
    this.push(separator === '{' ? '{}' : '}');
  }

  // The explicit-stack writer's state: the open containers, as parallel stacks (one shape per
  // array keeps the loop fast), and the value to write next.
  private readonly containers: object[] = [];
  private readonly keyLists: (string[] | null)[] = [];
  private readonly positions: number[] = [];
  private readonly wroteMember: boolean[] = [];
  private readonly ancestors = new Set<object>();
  private next: unknown = NOTHING;
  // Containers a toJSON() returned, counted along the open path: an endlessly generating toJSON()
  // never repeats an object, so no cycle check can stop it, but its nesting can be bounded.
  private readonly computed: boolean[] = [];
  private computedDepth = 0;
  private nextComputed = false;

  /** {@link resolveToJson}, remembering whether a toJSON() produced the value. */
  private resolve(raw: unknown, key: string | number): unknown {
    const value = resolveToJson(raw, key);
    this.nextComputed = value !== raw;
    return value;
  }

  /** The same without recursion, for data nested deeper than the stack allows; refuses cycles. */
  private writeDeep(root: object): void {
    this.begin(root);
    this.resume(Infinity);
  }

  /** Starts writing `root` with the explicit stack; {@link resume} does the work. */
  begin(root: unknown): void {
    this.next = root;
    this.nextComputed = false;
  }

  /** Opens `container` on the explicit stack, refusing nesting no real data has. */
  private open(): void {
    const computed = this.nextComputed;
    this.computed.push(computed);
    if (computed) this.computedDepth++;
    if (this.computedDepth > DEFAULT_JSON_BOUNDS.maxComputedDepth) {
      throw tooDeep(
        `values produced by toJSON() nest deeper than ${DEFAULT_JSON_BOUNDS.maxComputedDepth} levels (an endlessly generated structure?)`,
      );
    }
    if (this.containers.length > DEFAULT_JSON_BOUNDS.maxDepth) throw tooDeep(`nested deeper than ${DEFAULT_JSON_BOUNDS.maxDepth} levels`);
  }

  /** Closes the innermost container of the explicit stack. */
  private close(): void {
    if (this.computed.pop()) this.computedDepth--;
  }

  /**
   * Writes on for at most `values` values; true when `root` is complete. The caller can give the
   * event loop a turn between two calls: a 10 MB answer is then many short steps, not one stall.
   */
  resume(values: number): boolean {
    const { containers, keyLists, positions, wroteMember, ancestors } = this;
    let value = this.next;
    for (let done = 0; value !== NOTHING; done++) {
      if (done >= values) {
        this.next = value;
        return false;
      }
      const scalar = scalarJson(value);
      if (scalar !== undefined) {
        this.push(scalar);
      } else {
        const container = value as object;
        // A cycle repeats without end, so some member of it comes back at a depth that is a
        // multiple of 64: checking only there finds every cycle at a 64th of the cost.
        if (containers.length % 64 === 0) {
          if (ancestors.has(container)) throw cyclic(this.template);
          ancestors.add(container);
        }
        containers.push(container);
        this.open();
        positions.push(0);
        wroteMember.push(false);
        if (isArrayLike(container)) {
          this.push('[');
          keyLists.push(null);
        } else {
          this.push('{');
          keyLists.push(sortedKeys(container));
        }
      }

      value = NOTHING;
      while (containers.length > 0 && value === NOTHING) {
        const top = containers.length - 1;
        const container = containers[top];
        const keys = keyLists[top];
        let i = positions[top];
        if (keys === null) {
          const array = container as ArrayLike<unknown>;
          if (i < array.length) {
            if (i > 0) this.push(',');
            value = this.resolve(array[i], i);
            positions[top] = i + 1;
            continue;
          }
          this.push(']');
        } else {
          while (i < keys.length) {
            const key = keys[i++];
            const member = this.resolve((container as Record<string, unknown>)[key], key);
            if (isAbsent(member)) continue;
            this.push(`${wroteMember[top] ? ',' : ''}${quoteJsonString(key)}:`);
            wroteMember[top] = true;
            value = member;
            break;
          }
          positions[top] = i;
          if (value !== NOTHING) continue;
          this.push('}');
        }
        if (top % 64 === 0) ancestors.delete(container);
        containers.pop();
        this.close();
        keyLists.pop();
        positions.pop();
        wroteMember.pop();
      }
    }
    this.next = NOTHING;
    return true;
  }
}

/**
 * Compact JSON with sorted keys, as Go's `json.Marshal` writes it. Deep data does not overflow the
 * stack, a cycle is refused, and writing stops as soon as the output is surely over budget.
 */
function toCompactJson(root: unknown, budget: OutputBudget, template: string): string {
  const writer = new JsonWriter(budget.remaining(), budget, template);
  writer.write(resolveToJson(root, ''), 0);
  const out = writer.text();
  budget.add(out.length);
  return out;
}

/** Values written between two looks at the clock by {@link toCompactJsonSliced}. */
const VALUES_PER_SLICE = 2048;

/**
 * {@link toCompactJson} in slices that give the event loop a turn whenever `tick` says the current
 * run has lasted long enough: the same text, without one long stall for a large value.
 */
async function toCompactJsonSliced(
  root: unknown,
  budget: OutputBudget,
  template: string,
  tick: () => Promise<void> | undefined,
): Promise<string[]> {
  const writer = new JsonWriter(budget.remaining(), budget, template);
  writer.begin(resolveToJson(root, ''));
  while (!writer.resume(VALUES_PER_SLICE)) {
    writer.flush();
    const pause = tick();
    if (pause) await pause;
  }
  const pieces = writer.pieces();
  for (const piece of pieces) budget.add(piece.length);
  return pieces;
}

/** One selected value as `kubectl -o jsonpath` prints it. */
function printValue(value: unknown, budget: OutputBudget, template: string): string {
  if (value === NO_VALUE) return '<no value>';
  if (value === null || isAbsent(value)) return 'null';
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      return formatNumber(value);
    case 'bigint':
      return value.toString();
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      return toCompactJson(value, budget, template);
  }
}

/**
 * Every result group as pieces of text: values of one group joined by a space, groups back to back.
 * `printed` holds objects and arrays already written (by {@link printResultsSliced}).
 */
function printPieces(
  groups: readonly (readonly unknown[])[],
  budget: OutputBudget,
  template: string,
  printed?: ReadonlyMap<unknown, string[]>,
): string[] {
  const parts: string[] = [];
  for (const group of groups) {
    for (let i = 0; i < group.length; i++) {
      const value = group[i];
      const done = printed?.get(value);
      if (done) parts.push(...done);
      else {
        const text = printValue(value, budget, template);
        // Objects and arrays were counted while they were written.
        if (typeof value !== 'object' || value === null) budget.add(text.length);
        parts.push(text);
      }
      if (i < group.length - 1) {
        budget.add(1);
        parts.push(' ');
      }
    }
  }
  return parts;
}

/** Prints every result group: values of one group joined by a space, groups back to back. */
export function printResults(groups: readonly (readonly unknown[])[], maxOutputBytes: number, template: string): string {
  const budget = new OutputBudget(maxOutputBytes, template);
  const output = printPieces(groups, budget, template).join('');
  if (Buffer.byteLength(output, 'utf8') > maxOutputBytes) throw budget.overflow();
  return output;
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !isAbsent(value);
}

/**
 * {@link printResults} for a request handler: objects and arrays are written in slices that share
 * the event loop (a 10 MB subtree printed in one go held it for most of a second), and the text is
 * answered in the pieces it was written in, for the caller to send without joining them.
 */
export async function printResultsSliced(
  groups: readonly (readonly unknown[])[],
  maxOutputBytes: number,
  template: string,
): Promise<string[]> {
  // Every call below is a whole slice (thousands of values, or a piece of up to a slice's text):
  // the clock is read after each one, not after every eighth.
  const tick = cooperativeTicker(undefined, 1);
  const budget = new OutputBudget(maxOutputBytes, template);
  const printed = new Map<unknown, string[]>();
  for (const group of groups) {
    for (const value of group) {
      if (isContainer(value) && !printed.has(value)) printed.set(value, await toCompactJsonSliced(value, budget, template, tick));
    }
  }
  const pieces = printPieces(groups, new OutputBudget(maxOutputBytes, template), template, printed);
  let bytes = 0;
  for (const piece of pieces) {
    bytes += Buffer.byteLength(piece, 'utf8');
    if (bytes > maxOutputBytes) throw budget.overflow();
    const pause = tick();
    if (pause) await pause;
  }
  return pieces;
}
