/**
 * Which exposition a scraper's `Accept` asks for, matched as Prometheus' own negotiation
 * (`expfmt.NegotiateAccept` in prometheus/common) matches it: a media range's `version` selects,
 * every other parameter (`escaping`, `charset`, anything new) is left aside and never disqualifies
 * a range, and `escaping` says how names are to be escaped; and the content type each format is
 * answered with. Prometheus 3 asks, by default (one line, split here):
 *
 * ```
 * application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,
 * application/openmetrics-text;version=0.0.1;q=0.5,
 * text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*\/*;q=0.2
 * ```
 */
import type { MetricsRegistry } from '../shapes';
import { rangeCovers, type MediaRange } from '../../http/header-lists';
import { dialectOf, OPENMETRICS_CONTENT_TYPE, type ExpositionFormat } from './dialect';
import { NAME_ESCAPINGS, type NameEscaping } from './name-writer';
import { PROTOBUF_CONTENT_TYPE } from './protobuf';

/**
 * What a format answers to: its media type, the `version`s whose syntax its body satisfies, and
 * parameters a range must carry with exactly these values to ask for it.
 */
interface Offer {
  readonly format: ExpositionFormat;
  readonly type: string;
  readonly subtype: string;
  readonly versions: readonly string[];
  readonly required?: Readonly<Record<string, string>>;
}

/**
 * Text 0.0.4 with legacy names (the only names written) is also a valid body of Prometheus' text
 * 1.0.0, which adds quoted UTF-8 names and nothing else; Prometheus 3 picks its parser by media
 * type alone, so `text/plain;version=1.0.0` is answered with text, labelled 0.0.4. OpenMetrics
 * 0.0.1 and 1.0.0 share their syntax: both are answered with OpenMetrics labelled 1.0.0.
 * OpenMetrics 2.0 and any other version match nothing. The protobuf exposition (delimited
 * `io.prometheus.client.MetricFamily` messages, which alone carries native histograms) is asked
 * for by name only, as `expfmt` matches it: a range must say `proto=io.prometheus.client.MetricFamily`
 * and `encoding=delimited`, so no wildcard ever selects it.
 */
const OFFERS: readonly Offer[] = [
  { format: 'text', type: 'text', subtype: 'plain', versions: ['0.0.4', '1.0.0'] },
  { format: 'openmetrics', type: 'application', subtype: 'openmetrics-text', versions: ['1.0.0', '0.0.1'] },
  {
    format: 'protobuf',
    type: 'application',
    subtype: 'vnd.google.protobuf',
    versions: [],
    required: { proto: 'io.prometheus.client.MetricFamily', encoding: 'delimited' },
  },
];

/** The format and name escaping to answer. */
export interface Negotiated {
  readonly format: ExpositionFormat;
  readonly escaping: NameEscaping;
}

/** How specifically `range` covers `offer` (its covering of the media type, plus one for a matching `version`), or -1. */
function specificityFor(range: MediaRange, offer: Offer): number {
  const covers = rangeCovers(range, offer.type, offer.subtype);
  if (covers < 0) return -1;
  if (offer.required !== undefined) {
    for (const [name, value] of Object.entries(offer.required)) if (range.params.get(name) !== value) return -1;
  }
  const version = range.params.get('version');
  if (version === undefined) return covers;
  return offer.versions.includes(version) ? covers + 1 : -1;
}

/** The `escaping` a range asks for: one of the four schemes, else (absent, unknown) the default. */
function escapingOf(range: MediaRange | undefined): NameEscaping {
  const asked = range?.params.get('escaping');
  return NAME_ESCAPINGS.find((scheme) => scheme === asked) ?? 'underscores';
}

/**
 * The format `ranges` (a request's `Accept`, undefined without one) prefers. Each format weighs
 * what its most specific covering range says (a heavier one among equally specific ranges); the
 * heavier format wins, then the one whose range is more specific, then the one named earlier in
 * the header, then `fallback` (the registry's own format). No header, or nothing acceptable (every
 * covering range at `q=0`), gives `fallback`: a scrape is never refused for its preferences, as
 * Prometheus' client libraries never refuse one. The escaping is the deciding range's, when it
 * names one of the four schemes.
 */
export function negotiateExposition(ranges: readonly MediaRange[] | undefined, fallback: ExpositionFormat): Negotiated {
  let best: { format: ExpositionFormat; range: MediaRange; specificity: number } | undefined;
  for (const offer of OFFERS) {
    let range: MediaRange | undefined;
    let specificity = -1;
    for (const candidate of ranges ?? []) {
      const covers = specificityFor(candidate, offer);
      if (covers > specificity || (covers === specificity && covers >= 0 && candidate.q > range!.q)) {
        range = candidate;
        specificity = covers;
      }
    }
    if (range === undefined || range.q === 0) continue;
    const better =
      best === undefined ||
      range.q > best.range.q ||
      (range.q === best.range.q &&
        (specificity > best.specificity ||
          (specificity === best.specificity &&
            (range.order < best.range.order || (range.order === best.range.order && offer.format === fallback)))));
    if (better) best = { format: offer.format, range, specificity };
  }
  if (best === undefined) return { format: fallback, escaping: 'underscores' };
  return { format: best.format, escaping: escapingOf(best.range) };
}

/** The format a registry renders itself in when asked for nothing: its content type's. */
export function registryFormat(registry: MetricsRegistry): ExpositionFormat {
  return registry.contentType === OPENMETRICS_CONTENT_TYPE ? 'openmetrics' : 'text';
}

/** The `Content-Type` of a body in `format` whose names were written with `escaping`. */
export function contentTypeOf(format: ExpositionFormat, escaping: NameEscaping): string {
  const mediaType = format === 'protobuf' ? PROTOBUF_CONTENT_TYPE : dialectOf(format).contentType;
  return `${mediaType}; escaping=${escaping}`;
}
