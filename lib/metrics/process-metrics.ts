import { errorMessage } from '../util/error-message';
import { clientFor } from './client';
import { DEFAULT_METRIC_PREFIX, validateMetricPrefix } from './names';
import type { MetricsRegistry } from './shapes';

/** Options of {@link collectProcessMetrics}. */
export interface ProcessMetricsOptions {
  /** Prefix of the Node.js process metrics, for example `ctl_` gives `ctl_process_cpu_seconds_total`. Default `ctl_`. */
  prefix?: string;
}

/**
 * The first metric prom-client's default collector registers. Its presence tells us the set was
 * already collected with this prefix, whoever did it (us or the host calling prom-client directly).
 */
const MARKER_SUFFIX = 'process_cpu_user_seconds_total';

/**
 * Adds prom-client's Node.js process metrics (CPU, memory, heap, event-loop lag, GC, handles…) to
 * `registry`.
 *
 * Idempotent per registry and prefix: prom-client itself throws "already registered" on a second
 * call, which would crash a host that wires metrics from two places. The check looks at the
 * registry's contents rather than a private flag, so it also holds after `registry.clear()`
 * (collects again) and when the host called `collectDefaultMetrics` itself (does nothing).
 *
 * The metrics belong to the registry, not to a `ControllerMetrics`: its `remove()` leaves them.
 *
 * @returns `true` when the metrics were added by this call, `false` when they were already there.
 * @throws TypeError when the prefix is invalid.
 * @throws Error when only some of the process metrics exist on the registry under this prefix.
 */
export function collectProcessMetrics(registry: MetricsRegistry, options: ProcessMetricsOptions = {}): boolean {
  if (typeof registry !== 'object' || registry === null || typeof registry.getSingleMetric !== 'function') {
    throw new TypeError(
      'collectProcessMetrics: the first argument must be a Registry of prom-client or @prometheus-io/client, for example new Registry()',
    );
  }
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('collectProcessMetrics: options must be an object, for example { prefix: "ctl_" }');
  }
  const prefix = validateMetricPrefix(
    options.prefix === undefined ? DEFAULT_METRIC_PREFIX : options.prefix,
    'collectProcessMetrics: prefix',
  );
  if (registry.getSingleMetric(prefix + MARKER_SUFFIX) !== undefined) return false;
  try {
    clientFor(registry, 'collectProcessMetrics').collectDefaultMetrics({ register: registry, prefix });
  } catch (err) {
    const reason = errorMessage(err);
    throw new Error(
      `cannot add Node.js process metrics with prefix "${prefix}": ${reason}. Some of them already exist on ` +
        'this registry; use another processMetrics.prefix or another registry',
    );
  }
  return true;
}
