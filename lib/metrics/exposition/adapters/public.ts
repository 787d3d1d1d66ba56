/**
 * The public read path: any metric the storage paths do not read (a Summary, a custom Metric
 * subclass, a metric of another client, a host's object with `get()`, anything that overrides how
 * values are read) is read through its own `get()` (or `getForPromString()`, which prom-client's
 * registry prefers), and its family is the samples that returned, one per step, as the client's
 * formatter would write them. Read only.
 */
import { callHost } from '../../../util/host-promise';
import { readOnce } from '../in-flight';
import type { LabelSet, ModelNeeds, Sample, SampleFamily } from '../model';
import { writableExemplar } from './stored';

/** One value as a metric's public `get()` / `getForPromString()` returns it. */
export interface PublicValue {
  readonly value: unknown;
  readonly labels?: LabelSet | null;
  readonly sharedLabels?: LabelSet | null;
  readonly metricName?: string;
  readonly exemplar?: unknown;
}

/** What a metric's public `get()` returns. */
export interface PublicMetricData {
  readonly name: string;
  readonly help: unknown;
  readonly type: string;
  readonly values?: readonly PublicValue[] | null;
}

/** Any metric in a registry, read only through its public methods. */
export interface PublicMetric {
  readonly name: string;
  readonly type?: unknown;
  readonly unit?: unknown;
  get(): Promise<PublicMetricData>;
  getForPromString?: () => Promise<PublicMetricData>;
}

/** A metric read through `get()`: how to start the read, and its family from what it returned. */
export interface PublicAccess {
  readonly kind: 'public';
  readonly metric: PublicMetric;
  /** Starts its `get()`, unless one is pending (`in-flight.ts`). */
  start(signal: AbortSignal | undefined): Promise<unknown>;
  /** The family of `collected`, what `get()` returned; its samples are read at the walk's first step. */
  family(collected: unknown, needs: ModelNeeds): SampleFamily;
}

/** The samples of `data`, one per `next()`, into one reused {@link Sample}. */
function* samples(data: PublicMetricData, exemplars: boolean): Generator<Sample> {
  const sample: Sample = {
    kind: 'sample',
    name: undefined,
    labels: undefined,
    sharedLabels: undefined,
    value: undefined,
    exemplar: undefined,
  };
  for (const value of data.values ?? []) {
    sample.name = value.metricName;
    sample.labels = value.labels;
    sample.sharedLabels = value.sharedLabels;
    sample.value = value.value;
    sample.exemplar = exemplars ? writableExemplar(undefined, undefined, undefined, value.exemplar) : undefined;
    yield sample;
  }
}

/** How `metric` is read through its public `get()`. */
export function publicAccess(metric: PublicMetric): PublicAccess {
  const get = (): unknown => (typeof metric.getForPromString === 'function' ? metric.getForPromString() : metric.get());
  return {
    kind: 'public',
    metric,
    start: (signal) => callHost(() => readOnce(metric, 'get', get), signal),
    family(collected, needs) {
      const data = collected as PublicMetricData;
      return {
        kind: 'samples',
        name: data.name,
        help: data.help,
        type: data.type,
        unit: metric.unit,
        series: samples(data, needs.exemplars),
      };
    },
  };
}
