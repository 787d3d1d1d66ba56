/**
 * Metric and label names as the answer writes them. Text 0.0.4 and OpenMetrics 1.0.0 have no
 * syntax for a name outside the legacy character set (`[a-zA-Z_:][a-zA-Z0-9_:]*` for metrics,
 * `[a-zA-Z_][a-zA-Z0-9_]*` for labels): prom-client checks the names it is given when a metric is
 * created, but a custom metric's `get()`, the registry's default labels or a label set changed
 * after `set()` can still carry a space, a quote or a newline, which would end the line or the
 * name early and fail the whole scrape. Such a name is written with every character outside the
 * set replaced by `_` (a leading digit too), the `underscores` escaping of Prometheus 3; a valid
 * name, which is every name prom-client validated, is written as it is, byte-identical to
 * prom-client.
 */
import { hostText } from './dialect';

/**
 * The name-escaping schemes a Prometheus 3 scraper may ask for with `escaping=` (and an answer's
 * `Content-Type` states): `allow-utf-8` (no escaping needed), `underscores` (the default),
 * `dots` and `values`.
 */
export type NameEscaping = 'allow-utf-8' | 'underscores' | 'dots' | 'values';

/** The schemes, as the `escaping` parameter spells them. */
export const NAME_ESCAPINGS: readonly NameEscaping[] = ['allow-utf-8', 'underscores', 'dots', 'values'];

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Whether `name` is a label name of the legacy character set, which both formats can write as it is. */
export function isLegacyLabelName(name: string): boolean {
  return LABEL_NAME.test(name);
}

/** Label names remembered per scrape (name -> written form); past this, each is checked again where it occurs. */
const REMEMBERED_LABEL_NAMES = 4096;

/** `name` with every character outside the legacy set replaced by `_`; `_` for an empty name. */
function underscored(name: string, colons: boolean): string {
  let text = '';
  // By code point, so that a character outside the BMP becomes one `_`, not two.
  for (const char of name) {
    const code = char.charCodeAt(0);
    const letter = (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x5f;
    const digit = code >= 0x30 && code <= 0x39 && char.length === 1;
    const allowed = letter || (digit && text !== '') || (colons && code === 0x3a);
    text += allowed && char.length === 1 ? char : '_';
  }
  return text === '' ? '_' : text;
}

/**
 * Writes the names of one scrape. Remembers whether any name had to be rewritten, which decides
 * the `escaping` the answer states ({@link answeredEscaping}).
 */
export class NameWriter {
  private readonly labels = new Map<string, string>();
  private rewritten = false;

  /** Whether a name of this scrape was outside the legacy set and written with underscores. */
  get rewrote(): boolean {
    return this.rewritten;
  }

  /** A metric or sample name, whatever the host gave (converted as label values are). */
  metric(name: unknown): string {
    const text = hostText(name);
    if (METRIC_NAME.test(text)) return text;
    this.rewritten = true;
    return underscored(text, true);
  }

  /** A label name (a key of a host's label set). */
  label(name: string): string {
    const known = this.labels.get(name);
    if (known !== undefined) return known;
    let written = name;
    if (!isLegacyLabelName(name)) {
      this.rewritten = true;
      written = underscored(name, false);
    }
    if (this.labels.size < REMEMBERED_LABEL_NAMES) this.labels.set(name, written);
    return written;
  }
}

/**
 * The `escaping` an answer states, from the one the scraper asked for and whether a name was
 * rewritten. Names are always written in the legacy set, valid ones untouched: that is what
 * `allow-utf-8` and `values` give too as long as no name needed rewriting, so those are answered
 * as asked (as client_golang answers them). Once a name was rewritten with underscores, or when
 * `dots` was asked (which would rewrite every `_` to `__`, and is not done here), the answer says
 * `underscores`, which is what was done.
 */
export function answeredEscaping(asked: NameEscaping, rewrote: boolean): NameEscaping {
  if (asked === 'dots' || rewrote) return 'underscores';
  return asked;
}
