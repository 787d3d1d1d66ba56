/**
 * The two exposition formats as data: what differs between Prometheus text 0.0.4 and OpenMetrics
 * 1.0.0 for the samples prom-client can hold. The text dialect reproduces prom-client's own
 * `registry.metrics()` byte for byte, quirks included (`Nan`); the OpenMetrics dialect follows the
 * OpenMetrics 1.0.0 ABNF where prom-client's OpenMetrics output does not (see docs/benchmarks.md,
 * "Metrics exposition (issue 27)", for each deliberate difference).
 */

/** An exposition format the renderer writes. */
export type ExpositionFormat = 'text' | 'openmetrics';

/** Content type of the Prometheus text format, exactly as prom-client's `Registry.PROMETHEUS_CONTENT_TYPE`. */
export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Content type of OpenMetrics 1.0.0, exactly as prom-client's `Registry.OPENMETRICS_CONTENT_TYPE`. */
export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** The per-format rules the family writers consult. */
export interface Dialect {
  /** Which format this is. */
  readonly format: ExpositionFormat;
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
 * A label value as both formats write it: backslash, newline and double quote escaped (one pass
 * gives what prom-client's three successive replaces give, as none of them produces a character a
 * later one rewrites). Non-strings (prom-client accepts numbers) are written as `String()` does.
 */
export function labelValue(value: unknown): string {
  if (typeof value !== 'string') return String(value);
  return NEEDS_ESCAPE.test(value) ? value.replace(/[\\\n"]/g, escapeChar) : value;
}

/** Text-format escaping of HELP and names: backslash and newline only, as prom-client does. */
export function escapeText(text: string): string {
  return text.indexOf('\\') === -1 && text.indexOf('\n') === -1 ? text : text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** prom-client's number formatting, including its `Nan` and its `+Inf` for anything not a finite number. */
function textValue(value: unknown): string {
  if (typeof value === 'number' && value === value && value !== Infinity && value !== -Infinity) return String(value);
  if (Number.isNaN(value)) return 'Nan';
  return (value as number) < 0 ? '-Inf' : '+Inf';
}

/** The Prometheus text format 0.0.4, as prom-client's `registry.metrics()` writes it. */
export const TEXT: Dialect = {
  format: 'text',
  contentType: TEXT_CONTENT_TYPE,
  help: escapeText,
  value: textValue,
  type: (type) => type,
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
  value: (value) => (Number.isNaN(value) ? 'NaN' : textValue(value)),
  // OpenMetrics calls Prometheus' `untyped` `unknown`.
  type: (type) => (type === 'untyped' ? 'unknown' : type),
  counterFamily: (name) => (name.endsWith('_total') ? name.slice(0, -'_total'.length) : name),
  counterSample: (family) => `${family}_total`,
  openMetrics: true,
  familySeparator: '',
  end: () => '# EOF\n',
};

/** The dialect of `format`. */
export function dialectOf(format: ExpositionFormat): Dialect {
  return format === 'openmetrics' ? OPENMETRICS : TEXT;
}
