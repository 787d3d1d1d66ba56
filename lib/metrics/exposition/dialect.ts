/**
 * The two exposition formats as data: what differs between Prometheus text 0.0.4 and OpenMetrics
 * 1.0.0 for the samples prom-client can hold. The text dialect reproduces prom-client's own
 * `registry.metrics()` byte for byte, quirks included (`Nan`); the OpenMetrics dialect follows the
 * OpenMetrics 1.0.0 ABNF where prom-client's OpenMetrics output does not (see docs/benchmarks.md,
 * "Metrics exposition (issue 27)", for each deliberate difference).
 */

/**
 * An exposition format the renderer writes: Prometheus text 0.0.4, OpenMetrics 1.0.0, or the
 * delimited protobuf exposition (which alone carries native histograms).
 */
export type ExpositionFormat = 'text' | 'openmetrics' | 'protobuf';

/** The formats written as text, each with its {@link Dialect}. */
export type TextFormat = Exclude<ExpositionFormat, 'protobuf'>;

/** Content type of the Prometheus text format, exactly as prom-client's `Registry.PROMETHEUS_CONTENT_TYPE`. */
export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Content type of OpenMetrics 1.0.0, exactly as prom-client's `Registry.OPENMETRICS_CONTENT_TYPE`. */
export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** The per-format rules the family writers consult. */
export interface Dialect {
  /** Which format this is. */
  readonly format: TextFormat;
  /** The `Content-Type` of a body in this format. */
  readonly contentType: string;
  /** Escapes a `# HELP` text. */
  help(text: string): string;
  /** Writes a sample value. */
  value(value: unknown): string;
  /** The `# TYPE` word for a prom-client metric type. */
  type(type: string): string;
  /** The family name of a counter called `name`. */
  counterFamily(name: string): string;
  /** The sample name of a counter family: the family name, or with `_total` in OpenMetrics. */
  counterSample(family: string): string;
  /** Whether `# UNIT` lines and exemplars exist in this format. */
  readonly openMetrics: boolean;
  /** Written before every family but the first. */
  readonly familySeparator: string;
  /** Written after the last family, given how many families were written. */
  end(families: number): string;
}

const NEEDS_ESCAPE = /[\\\n"]/;
const ESCAPED: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '"': '\\"' };
const escapeChar = (char: string): string => ESCAPED[char]!;

/**
 * What is written for a host value that cannot be converted to text: `String()` threw (an object
 * whose `toString` and `valueOf` throw or return objects, a revoked Proxy) or reading it threw (a
 * getter, see {@link readLabel}). The answer stays valid and the scrape goes on; the value is
 * visibly not the host's.
 */
export const UNPRINTABLE = '[unprintable]';

/**
 * Any host value as text, the way prom-client's template strings convert it (`String()`; a symbol,
 * which a template string cannot convert, as `Symbol(description)`). Never throws: a conversion
 * that throws gives {@link UNPRINTABLE}.
 */
export function hostText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return String(value);
  } catch {
    return UNPRINTABLE;
  }
}

/**
 * A label value as both formats write it: any host value converted by {@link hostText}, then
 * backslash, newline and double quote escaped (one pass gives what prom-client's three successive
 * replaces give, as none of them produces a character a later one rewrites). prom-client escapes
 * strings only and writes other values raw, so an `Error` whose message holds a quote or a newline
 * breaks its answer; here every value is escaped, and strings and numbers stay byte-identical.
 */
export function labelValue(value: unknown): string {
  const text = hostText(value);
  return NEEDS_ESCAPE.test(text) ? text.replace(/[\\\n"]/g, escapeChar) : text;
}

/** `labels[name]`, or {@link UNPRINTABLE} when reading it throws (a getter or a Proxy the host put in a label set). */
export function readLabel(labels: Readonly<Record<string, unknown>>, name: string): unknown {
  try {
    return labels[name];
  } catch {
    return UNPRINTABLE;
  }
}

/** Text-format escaping of HELP: backslash and newline only, as prom-client does. */
export function escapeText(text: string): string {
  return text.indexOf('\\') === -1 && text.indexOf('\n') === -1 ? text : text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/**
 * prom-client's number formatting, including its `Nan` (`nan` is the NaN spelling to write) and
 * its `+Inf` or `-Inf` for anything not a finite number, decided as prom-client decides it (`value
 * < 0`). Where that comparison throws (a symbol, an object whose `valueOf` throws), prom-client's
 * answer fails; here the sample is written as NaN.
 */
function sampleValue(value: unknown, nan: string): string {
  const number = sampleNumber(value);
  if (number !== number) return nan;
  if (number !== Infinity && number !== -Infinity) return String(number);
  return number < 0 ? '-Inf' : '+Inf';
}

/**
 * A host's sample value as a number, as every format decides it: a number as it is; anything else
 * (prom-client stores what it is given) `-Inf` when it compares below 0, else `+Inf`, and NaN
 * when comparing throws.
 */
export function sampleNumber(value: unknown): number {
  if (typeof value === 'number') return value;
  try {
    return (value as number) < 0 ? -Infinity : Infinity;
  } catch {
    return NaN;
  }
}

/** The `# TYPE` words of the text format 0.0.4. */
const TEXT_TYPES: ReadonlySet<string> = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** The `# TYPE` words of OpenMetrics 1.0.0. */
const OPENMETRICS_TYPES: ReadonlySet<string> = new Set([
  'counter',
  'gauge',
  'histogram',
  'gaugehistogram',
  'stateset',
  'info',
  'summary',
  'unknown',
]);

/** The Prometheus text format 0.0.4, as prom-client's `registry.metrics()` writes it. */
export const TEXT: Dialect = {
  format: 'text',
  contentType: TEXT_CONTENT_TYPE,
  help: escapeText,
  value: (value) => sampleValue(value, 'Nan'),
  // A type the format has no word for (a custom metric's) is written as untyped, the format's own default.
  type: (type) => (TEXT_TYPES.has(type) ? type : 'untyped'),
  counterFamily: (name) => name,
  counterSample: (family) => family,
  openMetrics: false,
  familySeparator: '\n',
  // prom-client joins families with a blank line and ends with a newline, also when there are none.
  end: (families) => (families === 0 ? '\n' : ''),
};

/** OpenMetrics 1.0.0. */
export const OPENMETRICS: Dialect = {
  format: 'openmetrics',
  contentType: OPENMETRICS_CONTENT_TYPE,
  // The ABNF's escaped-string has no bare double quote.
  help: (text) => labelValue(text),
  value: (value) => sampleValue(value, 'NaN'),
  // OpenMetrics calls Prometheus' `untyped` `unknown`, and has no word for a type it does not list.
  type: (type) => (OPENMETRICS_TYPES.has(type) ? type : 'unknown'),
  counterFamily: (name) => (name.endsWith('_total') ? name.slice(0, -'_total'.length) : name),
  counterSample: (family) => `${family}_total`,
  openMetrics: true,
  familySeparator: '',
  end: () => '# EOF\n',
};

/** The dialect of `format`. */
export function dialectOf(format: TextFormat): Dialect {
  return format === 'openmetrics' ? OPENMETRICS : TEXT;
}
