/**
 * The Prometheus metrics surface: the controller's metric families and the `/metrics` router.
 */
export { createMetricsRouter, type MetricsRouterOptions } from './router';
export { createControllerMetrics, type ControllerMetrics } from './controller-metrics';
export { DEFAULT_DURATION_BUCKETS, type ControllerMetricsOptions, type DurationBuckets, type MetricsStateSource } from './options';
export { collectProcessMetrics, type ProcessMetricsOptions } from './process-metrics';
export { controllerMetricNames, DEFAULT_METRIC_PREFIX } from './names';
export type { MonotonicClock } from './clock';
