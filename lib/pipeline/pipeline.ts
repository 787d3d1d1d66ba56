import { checkStateInPlace, didYouMean } from '../options';
import { custom, optionSpec } from '../options/spec';
import type { ControllerConfig, IntrospectionState } from '../state/types';
import { Cycle, type CycleMetrics } from './cycle';
import { processQueue, type QueueProcessing, type QueueProcessingOptions } from './queue-processing';
import { PipelineRecords, shortError } from './records';
import { checkPipelineMetrics, type PipelineMetrics } from './reporting';
import type { CycleResult, CycleSpec } from './spec';
import type { WorkQueue } from './work-queue';

export type { PhaseStatus } from './records';
export type { CycleSpec, CycleResult } from './spec';

/** Options of {@link createPipeline}. */
export interface PipelineOptions {
  /**
   * Where reconciliation, validation and deployment are reported (optional): the
   * `ControllerMetrics` of `createControllerMetrics`, or any {@link PipelineMetrics}.
   */
  metrics?: PipelineMetrics;
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
  /**
   * Starts workers that reconcile the keys of `queue` (from `createWorkQueue`): each takes a key,
   * asks `options.cycle(key)` for the cycle's description and runs it as {@link run} does. A cycle
   * that fails puts its key back with the queue's backoff (a retry); one that succeeds ends the
   * key's backoff and, with `requeueAfterMs`, comes back after that long (a resync). With
   * controller-runtime's families on, the workers count in `controller_runtime_max_concurrent_reconciles`
   * and each cycle's result in `controller_runtime_reconcile_total{result}`.
   *
   * @throws TypeError on invalid options; Error when the queue is already being processed.
   */
  processQueue(queue: WorkQueue, options: QueueProcessingOptions): QueueProcessing;
}

const WHERE = 'createPipeline';

/** What the pipeline calls on its state. */
const STATE_METHODS = ['publishEvent', 'publishVar', 'setConfig', 'setRendered', 'openReadinessGate', 'runCycle'] as const;

/** The options of {@link createPipeline}, declared once. */
const PIPELINE_SPEC = optionSpec(WHERE, {
  metrics: custom(undefined, ({ where, path, value }) => checkPipelineMetrics(where, path, value)),
});

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
 * @param state - Where events, the rendered configuration and the variables go.
 * @throws TypeError on a wrong state or invalid options (options given first, where the state goes,
 *   are refused with the call's new shape); Error when the variables are already published on the state.
 */
export function createPipeline(state: IntrospectionState, options?: PipelineOptions): ReconciliationPipeline {
  checkStateInPlace(WHERE, state, STATE_METHODS, {
    position: 'first',
    optional: false,
    optionKeys: PIPELINE_SPEC.keys,
    call: 'createPipeline(state, { metrics })',
  });
  const { metrics } = PIPELINE_SPEC.resolve(options);

  const records = new PipelineRecords(state);
  const reporting = (successResult: CycleMetrics['successResult']): CycleMetrics => ({ metrics, successResult });
  const direct = reporting('success');
  return {
    // Async so that a bad cycle description rejects like every other failure of run().
    async run(spec: CycleSpec): Promise<CycleResult> {
      checkSpec(spec);
      return new Cycle(spec, state, direct, records).run();
    },
    configLoaded(config: ControllerConfig, version: string): void {
      state.setConfig(config, version);
      records.errors.config_parse = null;
      state.publishEvent('config.loaded', `configuration version ${version} loaded`, { details: { version } });
    },
    configRejected(error: unknown): void {
      records.errors.config_parse = records.error(error, null);
      state.publishEvent('config.parse_failed', shortError(error), { details: { error: shortError(error) } });
    },
    processQueue(queue: WorkQueue, processing: QueueProcessingOptions): QueueProcessing {
      return processQueue(queue, processing, {
        runtime: metrics?.driver.controllerRuntime,
        run: (spec, resync) => {
          checkSpec(spec);
          return new Cycle(spec, state, reporting(resync ? 'requeue_after' : 'success'), records).run();
        },
      });
    },
  };
}

const SPEC_FIELDS = ['trigger', 'reason', 'render', 'validate', 'endpoints', 'deploy'];

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
  for (const key of Object.keys(spec)) {
    if (!SPEC_FIELDS.includes(key)) {
      throw new TypeError(`pipeline.run: unknown field "${key}"${didYouMean(key, SPEC_FIELDS)}; known fields: ${SPEC_FIELDS.join(', ')}`);
    }
  }
}
