/**
 * The Prometheus metrics surface: the controller's metric families and the `/metrics` router.
 */
export { createMetricsRouter, MetricCollectError, type MetricsRouterOptions } from './router';
export { createControllerMetrics, type ControllerMetrics, type ControllerMetricsDriver } from './controller-metrics';
export {
  CONTROLLER_METRICS_DEFAULTS,
  DEFAULT_DURATION_BUCKETS,
  type BuildInfoOptions,
  type ControllerMetricsOptions,
  type ControllerRuntimeOptions,
  type DurationBuckets,
  type MetricsStateSource,
} from './options';
export {
  RECONCILE_TIME_BUCKETS,
  WORKQUEUE_DURATION_BUCKETS,
  type ControllerRuntimeDriver,
  type QueueReader,
  type QueueRecorder,
  type ReconcileResult,
} from './controller-runtime';
export { MAX_CORRELATION_ID_LENGTH } from './exemplar-store';
export { createKubeAuthMetrics, KUBE_AUTH_METRICS_DEFAULTS, type KubeAuthMetrics, type KubeAuthMetricsOptions } from './kube-auth-metrics';
export { collectProcessMetrics, type ProcessMetricsOptions } from './process-metrics';
export { controllerMetricNames, DEFAULT_METRIC_PREFIX } from './names';
export type { MonotonicClock } from '../util/clock';
export type { MetricsRegistry } from './shapes';
export {
  DEFAULT_NATIVE_BUCKET_FACTOR,
  DEFAULT_NATIVE_MAX_BUCKETS,
  DEFAULT_NATIVE_ZERO_THRESHOLD,
  type NativeHistogramOptions,
} from './native-histogram';
