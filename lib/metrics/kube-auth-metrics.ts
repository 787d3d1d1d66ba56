/**
 * The counter of `createKubeAuth`'s outcomes, `<prefix>auth_requests_total{outcome}`: the metrics
 * adapter of the guard's `KubeAuthReporter`, which it fits by shape (this folder is below
 * `lib/kubernetes/` and imports nothing of it).
 */
import { optionSpec } from '../options/spec';
import { closeOnce } from '../util/close-once';
import { clientFor } from './client';
import { PREFIX_OPTION } from './names';
import { isRegistry, type MetricsRegistry } from './shapes';

/** Options of {@link createKubeAuthMetrics}; omitted ones take {@link KUBE_AUTH_METRICS_DEFAULTS}. */
export interface KubeAuthMetricsOptions {
  /** The prefix of the counter's name, matching `[a-zA-Z_:][a-zA-Z0-9_:]*`. Default `ctl_`. */
  prefix?: string;
}

/** The counter of {@link createKubeAuthMetrics}: what `createKubeAuth` reports to, and its `close()`. */
export interface KubeAuthMetrics {
  /** The counter's full name, `<prefix>auth_requests_total`. */
  readonly name: string;
  /** Counts one request by what it came to. */
  reviewed(outcome: 'allowed' | 'unauthenticated' | 'forbidden' | 'unavailable' | 'always_allowed'): void;
  /**
   * Takes the counter off the registry (left alone when the registry no longer holds it, for
   * example after `registry.clear()`), so that another one with the same prefix can be created on
   * it. Counts afterwards are not exposed. The promise settles at once (on a later microtask) and
   * never rejects. Idempotent: every call answers the same promise. Fits `drain({ close: [...] })`.
   */
  close(): Promise<void>;
}

type Outcome = Parameters<KubeAuthMetrics['reviewed']>[0];

/** Every outcome, each exposed (at 0) from the start. */
const OUTCOMES: readonly Outcome[] = ['allowed', 'unauthenticated', 'forbidden', 'unavailable', 'always_allowed'];

const WHERE = 'createKubeAuthMetrics';
const SUFFIX = 'auth_requests_total';

/** The options of {@link createKubeAuthMetrics}, declared once. */
const KUBE_AUTH_METRICS_SPEC = optionSpec(WHERE, {
  /** `ctl_`. */
  prefix: PREFIX_OPTION,
});

/** What the options of {@link createKubeAuthMetrics} resolve to when omitted. Frozen. */
export const KUBE_AUTH_METRICS_DEFAULTS = KUBE_AUTH_METRICS_SPEC.defaults;

/**
 * Registers `<prefix>auth_requests_total{outcome}` on `registry`, every outcome (`allowed`,
 * `unauthenticated`, `forbidden`, `unavailable`, `always_allowed`) at 0, and answers what
 * `createKubeAuth` reports to: `createKubeAuth(api, createKubeAuthMetrics(registry), options)`.
 *
 * @param registry - A `Registry` of prom-client 15 or of `@prometheus-io/client` 0.16.
 * @param options - The prefix; see {@link KubeAuthMetricsOptions}.
 * @throws TypeError on a wrong registry or options, or when `registry` and a metric on it come from
 *   two metrics clients.
 * @throws Error when the registry already has a metric of that name (one counter per registry and
 *   prefix: share it between guards, `close()` it first, or use another prefix).
 */
export function createKubeAuthMetrics(registry: MetricsRegistry, options?: KubeAuthMetricsOptions): KubeAuthMetrics {
  if (!isRegistry(registry)) {
    throw new TypeError(
      `${WHERE}: the first argument must be a Registry of prom-client or @prometheus-io/client, for example new Registry()`,
    );
  }
  const { prefix } = KUBE_AUTH_METRICS_SPEC.resolve(options);
  const name = prefix + SUFFIX;
  if (registry.getSingleMetric(name) !== undefined) {
    throw new Error(`${WHERE}: the registry already has a metric named ${name} (one counter per registry and prefix)`);
  }
  const counter = new (clientFor(registry, WHERE).Counter)({
    name,
    help: 'Requests to the guarded endpoints, by what the TokenReview and SubjectAccessReview decided',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of OUTCOMES) counter.inc({ outcome }, 0);
  return {
    name,
    reviewed: (outcome) => counter.inc({ outcome }),
    close: closeOnce(0, () => {
      if (registry.getSingleMetric(name) === counter) registry.removeSingleMetric(name);
    }),
  };
}
