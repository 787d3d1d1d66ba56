/**
 * What this package reads and calls on a metrics client's objects, written by shape as the
 * Kubernetes side writes client-node's (`KubeAuthApi`, `LeaseApi`): the declarations name neither
 * prom-client nor `@prometheus-io/client`, so that a host of either, or of neither (introspection
 * only), type-checks them with `skipLibCheck` off. Both clients' classes fit these shapes
 * (`__tests__/metrics/shapes.test.ts` assigns them, type-checked by `npm run typecheck`); at run
 * time every class comes from the client of the host's registry (`client.ts`).
 */

/** A series' label values by label name, as both clients take them. */
export type MetricLabelValues = Readonly<Record<string, string | number>>;

/**
 * A metrics registry as this package uses it: a `Registry` of prom-client 15 or of
 * `@prometheus-io/client` 0.16 (text or OpenMetrics content type) fits, as does a host's own
 * registry object, which the metrics router renders through its own `metrics()`.
 */
export interface MetricsRegistry {
  /** The content type `metrics()` renders, Prometheus text 0.0.4 or OpenMetrics 1.0.0: the format a scrape gets by default. */
  readonly contentType: string;
  /** The whole exposition in the registry's own format. */
  metrics(): Promise<string>;
  /** The metric registered under `name`, or undefined. */
  getSingleMetric(name: string): object | undefined;
  /** Registers a metric of the registry's client (its metric constructors call it, for `registers`). */
  registerMetric(metric: object): void;
  /** Takes the metric registered under `name` off the registry. */
  removeSingleMetric(name: string): void;
  /** The registered metrics, in registration order. */
  getMetricsAsArray(): readonly object[];
}

/** Whether `value` is a registry a factory may register on: one with the members it calls. */
export function isRegistry(value: unknown): value is MetricsRegistry {
  const candidate = value as Partial<MetricsRegistry> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.getSingleMetric === 'function' &&
    typeof candidate.registerMetric === 'function' &&
    typeof candidate.metrics === 'function'
  );
}

/** The options a metric is created with, as both clients' metric constructors take them. */
export interface MetricConfiguration<M> {
  name: string;
  help: string;
  labelNames?: readonly string[];
  registers?: readonly MetricsRegistry[];
  /** Called at each scrape, on the metric, before its values are read. */
  collect?: (this: M) => void | Promise<void>;
}

/** A histogram's options: its buckets' upper bounds besides the rest. */
export interface HistogramConfiguration extends MetricConfiguration<HistogramLike> {
  buckets?: readonly number[];
}

/** A client's `Counter`, as this package drives it. */
export interface CounterLike {
  inc(value?: number): void;
  inc(labels: MetricLabelValues, value?: number): void;
  reset(): void;
  remove(labels: MetricLabelValues): void;
}

/** A client's `Gauge`, as this package drives it. */
export interface GaugeLike {
  set(value: number): void;
  set(labels: MetricLabelValues, value: number): void;
  reset(): void;
}

/** A client's `Histogram`, as this package drives it. */
export interface HistogramLike {
  observe(value: number): void;
  observe(labels: MetricLabelValues, value: number): void;
  zero(labels: MetricLabelValues): void;
  remove(labels: MetricLabelValues): void;
}

/** A client's exports, as this package uses them (both clients export the same classes and functions). */
export interface MetricsClientModule {
  readonly Registry: abstract new (...args: never[]) => MetricsRegistry;
  readonly Counter: new (configuration: MetricConfiguration<CounterLike>) => CounterLike;
  readonly Gauge: new (configuration: MetricConfiguration<GaugeLike>) => GaugeLike;
  readonly Histogram: new (configuration: HistogramConfiguration) => HistogramLike;
  /** Registers the client's Node.js process metrics on `register`, their names prefixed. */
  collectDefaultMetrics(configuration: { register?: MetricsRegistry; prefix?: string }): void;
}
