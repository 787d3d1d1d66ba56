import { randomUUID } from 'node:crypto';
import type { EventDetails, IntrospectionState } from '../state/types';
import { CONFIG_GATE } from '../state/store';
import type { CycleOutcome, PipelineMetrics } from './reporting';
import type { CycleResult, CycleSpec } from './spec';
import { durationMs, now, pending, shortError, timed, type CycleRecord, type EndpointRecord, type PipelineRecords } from './records';

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Where a cycle reports, besides the state. */
export interface CycleMetrics {
  /** The host's metrics, when given. */
  readonly metrics: PipelineMetrics | undefined;
  /** How a cycle that succeeded ended: `requeue_after` when a resync follows. */
  readonly successResult: CycleOutcome;
}

/**
 * One reconciliation cycle from trigger to outcome. Each phase records itself (events, metrics,
 * variables) as it ends, so a dump taken mid-cycle shows where the cycle is. The metrics it records
 * carry its correlation id as their exemplar.
 */
export class Cycle {
  private readonly id = randomUUID();
  private readonly started = performance.now();
  private readonly record: CycleRecord;

  constructor(
    private readonly spec: CycleSpec,
    private readonly state: IntrospectionState,
    private readonly reporting: CycleMetrics,
    private readonly records: PipelineRecords,
  ) {
    const reason = spec.reason ?? spec.trigger;
    this.record = {
      correlation_id: this.id,
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
  }

  /**
   * Runs the phases in order; the first that fails ends the cycle and rejects with its error. The
   * state notes when it ran, and CPU samples taken meanwhile carry its labels (docs/profiling.md).
   */
  run(): Promise<CycleResult> {
    return this.state.runCycle(this.labels(), () => this.phases());
  }

  private async phases(): Promise<CycleResult> {
    // Counted in controller_runtime_active_workers while it runs.
    const ended = this.metrics?.driver.controllerRuntime?.workStarted();
    try {
      this.records.last = this.record;
      this.records.cycles.total++;
      const reason = this.record.reason;
      this.event('reconciliation.triggered', reason, { trigger: this.spec.trigger, reason });
      const config = await this.render();
      await this.validate(config);
      await this.deploy(config);
      this.finish(true);
      return { correlationId: this.id, config, endpointsSucceeded: this.record.endpoints_succeeded };
    } finally {
      ended?.();
    }
  }

  /** The pprof labels of this cycle's CPU samples. */
  private labels(): Record<string, string> {
    const controller = this.metrics?.driver.controllerRuntime?.controller;
    const labels: Record<string, string> = { correlation_id: this.id, trigger: this.spec.trigger };
    if (controller !== undefined) labels['controller'] = controller;
    return labels;
  }

  private get metrics(): PipelineMetrics | undefined {
    return this.reporting.metrics;
  }

  private event(type: string, summary?: string, details?: EventDetails): void {
    const correlationId = this.id;
    this.state.publishEvent(type, summary, details === undefined ? { correlationId } : { correlationId, details });
  }

  /** Fails the cycle after `phase`: records the error where the host will look for it, then rethrows. */
  private fail(phase: 'render' | 'validate' | 'deploy', err: unknown): never {
    this.finish(false, phase, err);
    throw err;
  }

  private async render(): Promise<string> {
    const { errors } = this.records;
    try {
      const config = await timed(this.record.phases.render, this.spec.render);
      if (typeof config !== 'string') throw new TypeError(`render must return the configuration text, got ${typeof config}`);
      this.state.setRendered(config);
      errors.render = null;
      this.event('config.rendered', undefined, { size: Buffer.byteLength(config) });
      return config;
    } catch (err) {
      errors.render = this.records.error(err, this.id);
      this.event('config.render_failed', shortError(err));
      return this.fail('render', err);
    }
  }

  private async validate(config: string): Promise<void> {
    const validate = this.spec.validate;
    if (!validate) return;
    const { errors } = this.records;
    try {
      await timed(this.record.phases.validate, async () => {
        if ((await validate(config)) === false) throw new Error('configuration rejected by the validator');
      });
      this.metrics?.recordValidation(true);
      errors.validate = null;
      this.records.validated = { config, timestamp: now(), size: Buffer.byteLength(config), correlation_id: this.id };
      this.event('config.validated');
    } catch (err) {
      this.metrics?.recordValidation(false);
      errors.validate = this.records.error(err, this.id);
      this.event('config.validation_failed', shortError(err), { error: shortError(err) });
      this.fail('validate', err);
    }
  }

  /** Tries every endpoint, even after one fails, so one bad pod does not hold back the others. */
  private async deploy(config: string): Promise<void> {
    const { deploy, endpoints = [] } = this.spec;
    if (!deploy || endpoints.length === 0) return;
    const deployStarted = performance.now();
    this.event('deployment.started', `deploying to ${plural(endpoints.length, 'endpoint')}`, { endpoints: [...endpoints] });
    let firstError: unknown;
    await timed(this.record.phases.deploy, async () => {
      for (const endpoint of endpoints) {
        const err = await this.deployTo(endpoint, (target) => deploy(target, config));
        firstError ??= err;
      }
      if (firstError !== undefined) throw firstError;
    }).catch(() => undefined);
    const ok = firstError === undefined;
    this.metrics?.recordDeployment((performance.now() - deployStarted) / 1000, ok, this.id);
    const totals = { succeeded: this.record.endpoints_succeeded, failed: this.record.endpoints_failed };
    if (ok) {
      this.event('deployment.completed', `deployed to ${plural(totals.succeeded, 'endpoint')}`, totals);
    } else {
      this.event('deployment.failed', `${totals.failed} of ${endpoints.length} endpoints failed`, totals);
      this.fail('deploy', firstError);
    }
  }

  /** Deploys to one endpoint; resolves with its error, or `undefined` when it succeeded. */
  private async deployTo(endpoint: string, deploy: (endpoint: string) => unknown): Promise<unknown> {
    const outcome: EndpointRecord = { endpoint, ...pending() };
    this.record.phases.deploy.endpoints.push(outcome);
    const { errors } = this.records;
    try {
      await timed(outcome, () => deploy(endpoint));
      this.record.endpoints_succeeded++;
      errors.deploy.delete(endpoint);
      this.event('deployment.endpoint_updated', `${endpoint} updated`, { endpoint, duration_ms: outcome.duration_ms });
      return undefined;
    } catch (err) {
      this.record.endpoints_failed++;
      this.records.deployFailed(endpoint, this.records.error(err, this.id));
      this.event('deployment.endpoint_failed', `${endpoint}: ${shortError(err)}`, {
        endpoint,
        duration_ms: outcome.duration_ms,
        error: shortError(err),
      });
      return err;
    }
  }

  private finish(ok: boolean, failedPhase?: CycleRecord['failed_phase'], error?: unknown): void {
    const record = this.record;
    record.status = ok ? 'succeeded' : 'failed';
    record.ended = now();
    record.duration_ms = durationMs(this.started);
    if (ok) {
      this.records.cycles.succeeded++;
      this.records.lastSuccess = { correlation_id: this.id, ended: record.ended };
      // A controller that has reconciled successfully has synced its configuration.
      this.state.openReadinessGate(CONFIG_GATE);
      this.event('reconciliation.completed', undefined, { duration_ms: record.duration_ms });
    } else {
      this.records.cycles.failed++;
      record.failed_phase = failedPhase ?? null;
      const message = shortError(error);
      this.event('reconciliation.failed', `${failedPhase} failed: ${message}`, {
        duration_ms: record.duration_ms,
        failed_phase: failedPhase,
        error: message,
      });
    }
    // A completed cycle, failed or not, is progress of the reconcile loop: the watchdog's default.
    this.state.recordProgress('reconciliation');
    const { metrics, successResult } = this.reporting;
    metrics?.driver.recordReconciliation(record.duration_ms / 1000, ok, this.id, ok ? successResult : 'error');
  }
}
