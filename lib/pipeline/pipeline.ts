import { randomUUID } from 'node:crypto';
import type { ControllerMetrics } from '../metrics/controller-metrics';
import type { ControllerConfig, EventDetails, IntrospectionState, Timestamp } from '../state/types';
import { CONFIG_GATE } from '../state/store';
import { errorMessage } from '../util/error-message';

/** One reconciliation cycle, described once: what triggered it and how each phase runs. */
export interface CycleSpec {
  /** What started the cycle, for example `resource-change`, `config-change`, `resync`. */
  trigger: string;
  /** Why, in a sentence (`ingress default/web updated`). Defaults to the trigger. */
  reason?: string;
  /** Renders the load-balancer configuration. */
  render: () => string | Promise<string>;
  /** Validates it: a throw (or `false`) fails validation and skips deployment. */
  validate?: (config: string) => unknown;
  /** The load-balancer endpoints to deploy to (pods, instances). */
  endpoints?: readonly string[];
  /** Deploys to one endpoint; a throw fails that endpoint (the others are still tried). */
  deploy?: (endpoint: string, config: string) => unknown;
}

/** Outcome of one phase. */
export type PhaseStatus = 'running' | 'succeeded' | 'failed' | 'skipped';

/** What {@link ReconciliationPipeline.run} answers for a cycle that succeeded. */
export interface CycleResult {
  /** The cycle's correlation id (every event of the cycle carries it). */
  readonly correlationId: string;
  /** The rendered configuration. */
  readonly config: string;
  /** Endpoints deployed to. */
  readonly endpointsSucceeded: number;
}

/** Options of {@link createPipeline}. */
export interface PipelineOptions {
  /** Where events, the rendered configuration and the variables go. */
  state: IntrospectionState;
  /** Where reconciliation, validation and deployment metrics go (optional). */
  metrics?: ControllerMetrics;
}

/** Records reconciliation cycles; see {@link createPipeline}. */
export interface ReconciliationPipeline {
  /**
   * Runs one cycle through its phases and records it. Resolves with the result when every phase
   * succeeded; otherwise rejects with the error of the phase that failed (for a deployment, the
   * first endpoint's error), after recording it.
   */
  run(spec: CycleSpec): Promise<CycleResult>;
  /** Stores a newly loaded configuration (`state.setConfig`) and clears the config-parse error. */
  configLoaded(config: ControllerConfig, version: string): void;
  /** Records that a new configuration could not be parsed or loaded (the old one stays). */
  configRejected(error: unknown): void;
}

interface PhaseRecord {
  status: PhaseStatus;
  duration_ms: number | null;
  error: string | null;
}

interface EndpointRecord extends PhaseRecord {
  endpoint: string;
}

interface CycleRecord {
  correlation_id: string;
  trigger: string;
  reason: string;
  status: PhaseStatus;
  started: Timestamp;
  ended: Timestamp | null;
  duration_ms: number | null;
  failed_phase: 'render' | 'validate' | 'deploy' | null;
  phases: { render: PhaseRecord; validate: PhaseRecord; deploy: PhaseRecord & { endpoints: EndpointRecord[] } };
  endpoints_succeeded: number;
  endpoints_failed: number;
}

interface ErrorRecord {
  error: string;
  timestamp: Timestamp;
  correlation_id: string | null;
}

const MAX_ERROR = 1024;
const VARIABLES = ['pipeline', 'validated', 'errors'] as const;

function cut(message: string): string {
  return message.length > MAX_ERROR ? `${message.slice(0, MAX_ERROR)}…` : message;
}

const pending = (): PhaseRecord => ({ status: 'skipped', duration_ms: null, error: null });

/**
 * Creates the reconciliation pipeline recorder for a state (one per state: it publishes the
 * `pipeline`, `validated` and `errors` variables). From one {@link CycleSpec} per cycle it records
 * the controller metrics (reconciliation, validation, deployment), the events
 * (`reconciliation.triggered`, `config.rendered`, `config.validated` or `config.validation_failed`,
 * `deployment.started`, `deployment.endpoint_updated` / `deployment.endpoint_failed`,
 * `deployment.completed` or `deployment.failed`, `reconciliation.completed` or
 * `reconciliation.failed`; all with the cycle's correlation id and details), the rendered
 * configuration, and the variables: `pipeline` (the last cycle, phase by phase, and the last
 * successful one), `validated` (the last configuration that passed validation) and `errors` (the
 * latest error per phase, cleared when that phase next succeeds).
 *
 * @throws TypeError on invalid options; Error when the variables are already published on the state.
 */
export function createPipeline(options: PipelineOptions): ReconciliationPipeline {
  const { state, metrics } = options ?? ({} as PipelineOptions);
  if (typeof state?.publishEvent !== 'function' || typeof state.publishVar !== 'function') {
    throw new TypeError('createPipeline: option "state" must be an IntrospectionState (createIntrospectionState())');
  }
  if (metrics !== undefined && typeof metrics?.recordReconciliation !== 'function') {
    throw new TypeError('createPipeline: option "metrics" must be the result of createControllerMetrics()');
  }
  for (const key of Object.keys(options)) {
    if (key !== 'state' && key !== 'metrics') throw new TypeError(`createPipeline: unknown option "${key}"; known options: state, metrics`);
  }

  let last: CycleRecord | undefined;
  let lastSuccess: { correlation_id: string; ended: Timestamp } | null = null;
  const cycles = { total: 0, succeeded: 0, failed: 0 };
  let validated: { config: string; timestamp: Timestamp; size: number; correlation_id: string } | null = null;
  const errors: {
    render: ErrorRecord | null;
    validate: ErrorRecord | null;
    deploy: Record<string, ErrorRecord>;
    config_parse: ErrorRecord | null;
  } = {
    render: null,
    validate: null,
    deploy: {},
    config_parse: null,
  };
  let lastErrorAt: Timestamp | null = null;

  const now = (): Timestamp => new Date().toISOString();
  const recordError = (message: string, correlationId: string | null): ErrorRecord => {
    const at = now();
    lastErrorAt = at;
    return { error: cut(message), timestamp: at, correlation_id: correlationId };
  };

  for (const name of VARIABLES) {
    if (state.listVars().includes(name))
      throw new Error(`createPipeline: variable "${name}" is already published on this state (one pipeline per state)`);
  }
  state.publishVar('pipeline', () => ({
    ...(last ?? { correlation_id: null, status: 'none' }),
    last_success: lastSuccess,
    cycles: { ...cycles },
  }));
  state.publishVar('validated', () => validated);
  state.publishVar('errors', () => ({
    render: errors.render,
    validate: errors.validate,
    deploy: { ...errors.deploy },
    config_parse: errors.config_parse,
    last_error_timestamp: lastErrorAt,
  }));

  async function timed<T>(phase: PhaseRecord, work: () => T | Promise<T>): Promise<T> {
    const started = performance.now();
    phase.status = 'running';
    try {
      const result = await work();
      phase.status = 'succeeded';
      return result;
    } catch (err) {
      phase.status = 'failed';
      phase.error = cut(errorMessage(err));
      throw err;
    } finally {
      phase.duration_ms = Math.round((performance.now() - started) * 1000) / 1000;
    }
  }

  async function run(spec: CycleSpec): Promise<CycleResult> {
    checkSpec(spec);
    const id = randomUUID();
    const event = (type: string, summary?: string, details?: EventDetails): void =>
      state.publishEvent(type, summary, details === undefined ? { correlationId: id } : { correlationId: id, details });
    const reason = spec.reason ?? spec.trigger;
    const started = performance.now();
    const record: CycleRecord = {
      correlation_id: id,
      trigger: spec.trigger,
      reason,
      status: 'running',
      started: now(),
      ended: null,
      duration_ms: null,
      failed_phase: null,
      phases: { render: pending(), validate: pending(), deploy: { ...pending(), endpoints: [] } },
      endpoints_succeeded: 0,
      endpoints_failed: 0,
    };
    last = record;
    cycles.total++;
    event('reconciliation.triggered', reason, { trigger: spec.trigger, reason });

    const finish = (ok: boolean, failedPhase?: CycleRecord['failed_phase'], error?: unknown): void => {
      record.status = ok ? 'succeeded' : 'failed';
      record.ended = now();
      record.duration_ms = Math.round((performance.now() - started) * 1000) / 1000;
      if (ok) {
        cycles.succeeded++;
        lastSuccess = { correlation_id: id, ended: record.ended };
        // A controller that has reconciled successfully has synced its configuration.
        state.openReadinessGate(CONFIG_GATE);
        event('reconciliation.completed', undefined, { duration_ms: record.duration_ms });
      } else {
        cycles.failed++;
        record.failed_phase = failedPhase ?? null;
        const message = cut(errorMessage(error));
        event('reconciliation.failed', `${failedPhase} failed: ${message}`, {
          duration_ms: record.duration_ms,
          failed_phase: failedPhase,
          error: message,
        });
      }
      if (metrics) metrics.recordReconciliation(record.duration_ms / 1000, ok);
      else state.recordProgress('reconciliation');
    };

    let config: string;
    try {
      config = await timed(record.phases.render, spec.render);
      if (typeof config !== 'string') throw new TypeError(`render must return the configuration text, got ${typeof config}`);
      state.setRendered(config);
      errors.render = null;
      event('config.rendered', undefined, { size: Buffer.byteLength(config) });
    } catch (err) {
      errors.render = recordError(errorMessage(err), id);
      event('config.render_failed', cut(errorMessage(err)));
      finish(false, 'render', err);
      throw err;
    }

    if (spec.validate) {
      const validate = spec.validate;
      try {
        await timed(record.phases.validate, async () => {
          if ((await validate(config)) === false) throw new Error('configuration rejected by the validator');
        });
        metrics?.recordValidation(true);
        errors.validate = null;
        validated = { config, timestamp: now(), size: Buffer.byteLength(config), correlation_id: id };
        event('config.validated');
      } catch (err) {
        metrics?.recordValidation(false);
        errors.validate = recordError(errorMessage(err), id);
        event('config.validation_failed', cut(errorMessage(err)), { error: cut(errorMessage(err)) });
        finish(false, 'validate', err);
        throw err;
      }
    }

    const endpoints = spec.endpoints ?? [];
    if (spec.deploy && endpoints.length > 0) {
      const deploy = spec.deploy;
      const phase = record.phases.deploy;
      const deployStarted = performance.now();
      event('deployment.started', `deploying to ${endpoints.length} endpoint${endpoints.length === 1 ? '' : 's'}`, {
        endpoints: [...endpoints],
      });
      let firstError: unknown;
      await timed(phase, async () => {
        for (const endpoint of endpoints) {
          const outcome: EndpointRecord = { endpoint, ...pending() };
          phase.endpoints.push(outcome);
          try {
            await timed(outcome, () => deploy(endpoint, config));
            record.endpoints_succeeded++;
            delete errors.deploy[endpoint];
            event('deployment.endpoint_updated', `${endpoint} updated`, { endpoint, duration_ms: outcome.duration_ms });
          } catch (err) {
            record.endpoints_failed++;
            firstError ??= err;
            errors.deploy[endpoint] = recordError(errorMessage(err), id);
            event('deployment.endpoint_failed', `${endpoint}: ${cut(errorMessage(err))}`, {
              endpoint,
              duration_ms: outcome.duration_ms,
              error: cut(errorMessage(err)),
            });
          }
        }
        if (firstError !== undefined) throw firstError;
      }).catch(() => undefined);
      const ok = firstError === undefined;
      metrics?.recordDeployment((performance.now() - deployStarted) / 1000, ok);
      const totals = { succeeded: record.endpoints_succeeded, failed: record.endpoints_failed };
      if (ok) {
        event('deployment.completed', `deployed to ${totals.succeeded} endpoint${totals.succeeded === 1 ? '' : 's'}`, totals);
      } else {
        event('deployment.failed', `${totals.failed} of ${endpoints.length} endpoints failed`, totals);
        finish(false, 'deploy', firstError);
        throw firstError;
      }
    }
    finish(true);
    return { correlationId: id, config, endpointsSucceeded: record.endpoints_succeeded };
  }

  return {
    run,
    configLoaded(config: ControllerConfig, version: string): void {
      state.setConfig(config, version);
      errors.config_parse = null;
      state.publishEvent('config.loaded', `configuration version ${version} loaded`, { details: { version } });
    },
    configRejected(error: unknown): void {
      errors.config_parse = recordError(errorMessage(error), null);
      state.publishEvent('config.parse_failed', cut(errorMessage(error)), { details: { error: cut(errorMessage(error)) } });
    },
  };
}

function checkSpec(spec: CycleSpec): void {
  if (spec === null || typeof spec !== 'object')
    throw new TypeError('pipeline.run needs a cycle description { trigger, render, validate?, endpoints?, deploy? }');
  if (typeof spec.trigger !== 'string' || spec.trigger === '') throw new TypeError('pipeline.run: trigger must be a non-empty string');
  if (spec.reason !== undefined && typeof spec.reason !== 'string') throw new TypeError('pipeline.run: reason must be a string');
  if (typeof spec.render !== 'function') throw new TypeError('pipeline.run: render must be a function returning the configuration text');
  if (spec.validate !== undefined && typeof spec.validate !== 'function') throw new TypeError('pipeline.run: validate must be a function');
  if (spec.deploy !== undefined && typeof spec.deploy !== 'function')
    throw new TypeError('pipeline.run: deploy must be a function (endpoint, config)');
  if (spec.endpoints !== undefined && (!Array.isArray(spec.endpoints) || !spec.endpoints.every((e) => typeof e === 'string'))) {
    throw new TypeError('pipeline.run: endpoints must be an array of strings');
  }
  const known = ['trigger', 'reason', 'render', 'validate', 'endpoints', 'deploy'];
  for (const key of Object.keys(spec)) {
    if (!known.includes(key)) throw new TypeError(`pipeline.run: unknown field "${key}"; known fields: ${known.join(', ')}`);
  }
}
