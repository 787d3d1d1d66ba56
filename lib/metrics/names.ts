/**
 * The controller metric families every dashboard and alert relies on, without their prefix.
 *
 * Kept as data so the registration code, the duplicate check and the documentation cannot drift
 * apart: each family is declared exactly once, here.
 */

import * as option from '../options/spec';

/** The prefix used when none is given; it stands where the interface carries a product name. */
export const DEFAULT_METRIC_PREFIX = 'ctl_';

/** Which prom-client metric type a family is. */
export type ControllerMetricType = 'counter' | 'gauge' | 'histogram';

/** One metric family of the interface. */
export interface ControllerMetricDefinition {
  /** Name after the prefix, for example `reconciliation_total`. */
  readonly suffix: string;
  /** Prometheus type. */
  readonly type: ControllerMetricType;
  /** Label names; only `resource_count` has one. */
  readonly labelNames: readonly string[];
  /** HELP text: what one unit of the metric means. */
  readonly help: string;
}

/**
 * The 14 families, in exposition order (work counters, then events, then leadership). Keys are internal handles used by the
 * controller-metrics module.
 */
export const CONTROLLER_METRICS = {
  reconciliationTotal: { suffix: 'reconciliation_total', type: 'counter', labelNames: [], help: 'Reconciliation cycles triggered' },
  reconciliationDuration: {
    suffix: 'reconciliation_duration_seconds',
    type: 'histogram',
    labelNames: [],
    help: 'Time in reconciliation cycles',
  },
  reconciliationErrors: { suffix: 'reconciliation_errors_total', type: 'counter', labelNames: [], help: 'Failed reconciliation cycles' },
  deploymentTotal: { suffix: 'deployment_total', type: 'counter', labelNames: [], help: 'Deployment attempts' },
  deploymentDuration: {
    suffix: 'deployment_duration_seconds',
    type: 'histogram',
    labelNames: [],
    help: 'Time deploying to the load balancer',
  },
  deploymentErrors: { suffix: 'deployment_errors_total', type: 'counter', labelNames: [], help: 'Failed deployments' },
  validationTotal: { suffix: 'validation_total', type: 'counter', labelNames: [], help: 'Validation attempts' },
  validationErrors: { suffix: 'validation_errors_total', type: 'counter', labelNames: [], help: 'Failed validations' },
  resourceCount: { suffix: 'resource_count', type: 'gauge', labelNames: ['type'], help: 'Current count of watched resources' },
  eventSubscribers: { suffix: 'event_subscribers', type: 'gauge', labelNames: [], help: 'Active event subscribers' },
  eventsPublished: { suffix: 'events_published_total', type: 'counter', labelNames: [], help: 'Events published' },
  isLeader: {
    suffix: 'leader_election_is_leader',
    type: 'gauge',
    labelNames: [],
    help: '1 if this replica is leader, 0 otherwise',
  },
  leaderTransitions: {
    suffix: 'leader_election_transitions_total',
    type: 'counter',
    labelNames: [],
    help: 'Leadership transitions (gain or loss)',
  },
  timeAsLeader: {
    suffix: 'leader_election_time_as_leader_seconds_total',
    type: 'counter',
    labelNames: [],
    help: 'Cumulative seconds as leader',
  },
} as const satisfies Record<string, ControllerMetricDefinition>;

/** Internal handle of one family. */
export type ControllerMetricKey = keyof typeof CONTROLLER_METRICS;

const PREFIX_PATTERN = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/**
 * Checks a metric-name prefix once, at creation, so a bad prefix fails where it is configured
 * instead of inside prom-client with its terse "Invalid metric name".
 *
 * @param prefix - The candidate prefix.
 * @param option - How the option is called in the caller's API, for the message.
 * @throws TypeError when `prefix` is not a string matching `[a-zA-Z_:][a-zA-Z0-9_:]*`.
 */
export function validateMetricPrefix(prefix: unknown, option: string): string {
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    const shown = typeof prefix === 'string' ? JSON.stringify(prefix) : typeof prefix;
    throw new TypeError(
      `${option} must be a string matching [a-zA-Z_:][a-zA-Z0-9_:]* (Prometheus metric-name characters, ` +
        `not starting with a digit), for example "${DEFAULT_METRIC_PREFIX}"; got ${shown}`,
    );
  }
  return prefix;
}

/** The option `prefix` of a factory that registers families: {@link DEFAULT_METRIC_PREFIX} when omitted. */
export const PREFIX_OPTION = option.custom(DEFAULT_METRIC_PREFIX, ({ where, path, value, fallback }) =>
  validateMetricPrefix(value === undefined ? fallback : value, `${where}: ${path}`),
);

/**
 * The full names of the 14 controller metric families for a prefix, in exposition order. Useful for
 * dashboards, alert tests and checking what a registry holds.
 *
 * @param prefix - Metric-name prefix; defaults to `ctl_`.
 * @throws TypeError when the prefix is not a valid metric-name start.
 */
export function controllerMetricNames(prefix: string = DEFAULT_METRIC_PREFIX): string[] {
  validateMetricPrefix(prefix, 'controllerMetricNames: prefix');
  return Object.values(CONTROLLER_METRICS).map((definition) => prefix + definition.suffix);
}
