import type { Request } from 'express';
import { HttpError } from './errors';

/**
 * The list headers this package reads (`Accept`, `Accept-Encoding`, `If-None-Match`), parsed by
 * one bounded parser. Express's `req.accepts()` compares every element of the header with every
 * offer through `negotiator`, and the host chooses how long a header may be (`maxHeaderSize`): an
 * `Accept` of 100 000 elements, which a 16 MB limit lets through, held the event loop 2.9 s in
 * one `req.accepts()`. Here a header is refused before any work once it is longer than
 * {@link MAX_LIST_HEADER_CHARS} or holds more than {@link MAX_LIST_ENTRIES} elements: `431` with
 * a JSON body naming the header and the limit, never a silent cut that would change what the
 * header means. No client sends such a header (a browser's `Accept` is under 200 characters,
 * Prometheus' under 300).
 */

/** The longest list header read, in characters (duplicate fields counted together, as Node joins them). */
export const MAX_LIST_HEADER_CHARS = 4096;

/** The most elements read from one list header. */
export const MAX_LIST_ENTRIES = 64;

/** A list header this package reads. */
export type ListHeader = 'accept' | 'accept-encoding' | 'if-none-match';

/** The spelling of each header in error messages. */
const SPELLING: Readonly<Record<ListHeader, string>> = {
  accept: 'Accept',
  'accept-encoding': 'Accept-Encoding',
  'if-none-match': 'If-None-Match',
};

/** One element of a list header. */
export interface ListElement {
  /** What comes before the parameters, trimmed and as sent: a media range, a coding, an entity tag (quotes kept). */
  readonly value: string;
  /** The parameters but `q`, by lower-case name, quoted values unquoted; the first of a name wins. */
  readonly params: ReadonlyMap<string, string>;
  /** The weight (`q=`), 1 when absent. */
  readonly q: number;
  /** The element's position among the header's valid elements, from 0. */
  readonly order: number;
}

/** A weight as RFC 9110 writes it: 0 to 1 with at most three decimals. */
const WEIGHT = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;
const PARAM_NAME = /^[!#$%&'*+.^_`|~0-9a-zA-Z-]+$/;

/**
 * Where `separator` occurs in `text` outside quoted strings (`"..."`, with `\` escapes), and the
 * end of `text`: the boundaries of a header's elements (`,`) or of an element's parts (`;`).
 */
function topLevel(text: string, separator: string): number[] {
  const ends: number[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    if (quoted) {
      if (char === '\\') i += 1;
      else if (char === '"') quoted = false;
    } else if (char === '"') {
      quoted = true;
    } else if (char === separator) {
      ends.push(i);
    }
  }
  ends.push(text.length);
  return ends;
}

/** A parameter value: a token as it is, a quoted string without its quotes and escapes. */
function unquote(value: string): string {
  if (!value.startsWith('"')) return value;
  return value.slice(1, value.endsWith('"') && value.length > 1 ? -1 : undefined).replace(/\\(.)/g, '$1');
}

/**
 * One element, or undefined when it is malformed (a parameter without `=` or with a bad name, a
 * weight outside 0 to 1): a malformed element is skipped, as if it had not been sent.
 */
function parseElement(text: string, order: number): ListElement | undefined {
  const ends = topLevel(text, ';');
  const params = new Map<string, string>();
  let q = 1;
  for (let i = 1; i < ends.length; i += 1) {
    const raw = text.slice(ends[i - 1]! + 1, ends[i]);
    const equals = raw.indexOf('=');
    const name = (equals < 0 ? raw : raw.slice(0, equals)).trim().toLowerCase();
    if (equals < 0 || !PARAM_NAME.test(name)) return undefined;
    const value = unquote(raw.slice(equals + 1).trim());
    if (name === 'q') {
      if (!WEIGHT.test(value)) return undefined;
      q = Number(value);
    } else if (!params.has(name)) {
      params.set(name, value);
    }
  }
  return { value: text.slice(0, ends[0]).trim(), params, q, order };
}

/** The top-level elements of a list header, trimmed, empty ones dropped. */
function elementTexts(header: string): string[] {
  const texts: string[] = [];
  let start = 0;
  for (const end of topLevel(header, ',')) {
    const text = header.slice(start, end).trim();
    if (text !== '') texts.push(text);
    start = end + 1;
  }
  return texts;
}

/**
 * The elements of `req`'s `header`, or undefined when the request has none. Malformed elements are
 * left out.
 *
 * @throws HttpError 431 when the header is longer than {@link MAX_LIST_HEADER_CHARS} or holds more
 * than {@link MAX_LIST_ENTRIES} elements (decided before anything is parsed past the limit).
 */
export function listElements(req: Request, header: ListHeader): ListElement[] | undefined {
  const value: unknown = req.headers[header];
  if (typeof value !== 'string') return undefined;
  const spelling = SPELLING[header];
  if (value.length > MAX_LIST_HEADER_CHARS) {
    throw new HttpError(431, `header ${spelling} is longer than ${MAX_LIST_HEADER_CHARS} characters (${value.length})`);
  }
  const texts = elementTexts(value);
  if (texts.length > MAX_LIST_ENTRIES) {
    throw new HttpError(431, `header ${spelling} has more than ${MAX_LIST_ENTRIES} elements (${texts.length})`);
  }
  const elements: ListElement[] = [];
  for (const text of texts) {
    const element = parseElement(text, elements.length);
    if (element !== undefined) elements.push(element);
  }
  return elements;
}

/** A media range of an `Accept` header, taken apart. */
export interface MediaRange extends ListElement {
  /** The type, lower case; `*` for any. */
  readonly type: string;
  /** The subtype, lower case; `*` for any. */
  readonly subtype: string;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/** `req`'s `Accept` as media ranges, or undefined without one. Elements that are not `type/subtype` (or `type/*`, `*\/*`) are left out. */
export function acceptRanges(req: Request): MediaRange[] | undefined {
  const elements = listElements(req, 'accept');
  if (elements === undefined) return undefined;
  const ranges: MediaRange[] = [];
  for (const element of elements) {
    const [type, subtype, extra] = element.value.toLowerCase().split('/');
    if (type === undefined || subtype === undefined || extra !== undefined || !TOKEN.test(type) || !TOKEN.test(subtype)) continue;
    if (type === '*' && subtype !== '*') continue;
    ranges.push({ ...element, type, subtype });
  }
  return ranges;
}

/** Whether `range` covers the media type `type/subtype`, and how specifically (2 exact, 1 `type/*`, 0 `*\/*`), or -1. */
export function rangeCovers(range: MediaRange, type: string, subtype: string): number {
  if (range.type === '*') return 0;
  if (range.type !== type) return -1;
  if (range.subtype === '*') return 1;
  return range.subtype === subtype ? 2 : -1;
}

/**
 * The offer (`type/subtype`, lower case, in the server's order of preference) that `req`'s
 * `Accept` prefers: each offer weighs what its most specific covering range says, the heaviest
 * wins, then the one whose range is more specific, then the one named earlier in the header, then
 * the earlier offer. Parameters do not restrict a range. Without `Accept`, the first offer;
 * undefined when none is acceptable.
 *
 * @throws HttpError 431 over the limits of {@link listElements}.
 */
export function preferredMediaType(req: Request, offers: readonly string[]): string | undefined {
  const ranges = acceptRanges(req);
  if (ranges === undefined) return offers[0];
  let best: { offer: string; q: number; specificity: number; order: number } | undefined;
  for (const offer of offers) {
    const [type = '', subtype = ''] = offer.split('/');
    let match: MediaRange | undefined;
    let specificity = -1;
    for (const range of ranges) {
      const covers = rangeCovers(range, type, subtype);
      if (covers > specificity) {
        match = range;
        specificity = covers;
      }
    }
    if (match === undefined || match.q === 0) continue;
    const better =
      best === undefined ||
      match.q > best.q ||
      (match.q === best.q && (specificity > best.specificity || (specificity === best.specificity && match.order < best.order)));
    if (better) best = { offer, q: match.q, specificity, order: match.order };
  }
  return best?.offer;
}

/**
 * Whether the answer should be gzipped: `req`'s `Accept-Encoding` weighs `gzip` above zero and at
 * least as much as no encoding. A coding not named weighs what `*` says; `identity` not named
 * either weighs the least weight the header gives (as Express's own negotiation does), so
 * `gzip;q=0.5` alone still asks for gzip. No header (or an empty one) means no encoding.
 *
 * @throws HttpError 431 over the limits of {@link listElements}.
 */
export function prefersGzip(req: Request): boolean {
  const elements = listElements(req, 'accept-encoding');
  if (elements === undefined || elements.length === 0) return false;
  const weightOf = (coding: string): number | undefined => {
    let any: number | undefined;
    for (const element of elements) {
      const name = element.value.toLowerCase();
      if (name === coding) return element.q;
      if (name === '*' && any === undefined) any = element.q;
    }
    return any;
  };
  const gzip = weightOf('gzip') ?? 0;
  const identity = weightOf('identity') ?? Math.min(...elements.map((element) => element.q));
  return gzip > 0 && gzip >= identity;
}
