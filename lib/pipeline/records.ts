import type { IntrospectionState, Timestamp } from '../state/types';
import { cutText } from '../util/cut-text';
import { errorMessage } from '../util/error-message';

/** Outcome of one phase. */
export type PhaseStatus = 'running' | 'succeeded' | 'failed' | 'skipped';

/** One phase of a cycle, as the `pipeline` variable shows it. */
export interface PhaseRecord {
  status: PhaseStatus;
  duration_ms: number | null;
  error: string | null;
}

/** One endpoint of the deploy phase. */
export interface EndpointRecord extends PhaseRecord {
  endpoint: string;
}

/** One cycle, as the `pipeline` variable shows it. */
export interface CycleRecord {
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

// Host errors can carry whole rendered configurations; the variables and events keep a readable head.
const MAX_ERROR = 1024;
const VARIABLES = ['pipeline', 'validated', 'errors'] as const;
/** Most endpoints whose latest deploy error `errors.deploy` keeps. */
export const MAX_DEPLOY_ERRORS = 1000;

/** An error message cut to the length the variables and events keep. */
export function cut(message: string): string {
  return cutText(message, MAX_ERROR);
}

/** The message of a host error, cut for the variables and events. */
export function shortError(err: unknown): string {
  return cut(errorMessage(err));
}

/** A phase that has not run (and stays so when the cycle ends before it). */
export const pending = (): PhaseRecord => ({ status: 'skipped', duration_ms: null, error: null });

/** Milliseconds since `started` (a `performance.now()` reading), to the microsecond. */
export function durationMs(started: number): number {
  return Math.round((performance.now() - started) * 1000) / 1000;
}

/** The wall-clock timestamps the variables carry. */
export const now = (): Timestamp => new Date().toISOString();

/** Runs one phase's work and records its status, duration and error on `phase`. */
export async function timed<T>(phase: PhaseRecord, work: () => T | Promise<T>): Promise<T> {
  const started = performance.now();
  phase.status = 'running';
  try {
    const result = await work();
    phase.status = 'succeeded';
    return result;
  } catch (err) {
    phase.status = 'failed';
    phase.error = shortError(err);
    throw err;
  } finally {
    phase.duration_ms = durationMs(started);
  }
}

/**
 * What the pipeline remembers between cycles, served as the `pipeline`, `validated` and `errors`
 * variables. Providers read it at request time, so a dump always shows the latest cycle.
 */
export class PipelineRecords {
  last: CycleRecord | undefined;
  lastSuccess: { correlation_id: string; ended: Timestamp } | null = null;
  readonly cycles = { total: 0, succeeded: 0, failed: 0 };
  validated: { config: string; timestamp: Timestamp; size: number; correlation_id: string } | null = null;
  readonly errors: {
    render: ErrorRecord | null;
    validate: ErrorRecord | null;
    /** By endpoint: a Map, since endpoints are the host's names (`__proto__` is one like any other). */
    deploy: Map<string, ErrorRecord>;
    config_parse: ErrorRecord | null;
  } = { render: null, validate: null, deploy: new Map(), config_parse: null };
  private lastErrorAt: Timestamp | null = null;

  /** @throws Error when the variables are already published on `state` (one pipeline per state). */
  constructor(state: IntrospectionState) {
    for (const name of VARIABLES) {
      if (state.listVars().includes(name))
        throw new Error(`createPipeline: variable "${name}" is already published on this state (one pipeline per state)`);
    }
    state.publishVar('pipeline', () => ({
      ...(this.last ?? { correlation_id: null, status: 'none' }),
      last_success: this.lastSuccess,
      cycles: { ...this.cycles },
    }));
    state.publishVar('validated', () => this.validated);
    state.publishVar('errors', () => ({
      render: this.errors.render,
      validate: this.errors.validate,
      // Object.fromEntries defines each endpoint as an own key, `__proto__` included.
      deploy: Object.fromEntries(this.errors.deploy),
      config_parse: this.errors.config_parse,
      last_error_timestamp: this.lastErrorAt,
    }));
  }

  /**
   * Records the latest error of `endpoint`, the newest last; past {@link MAX_DEPLOY_ERRORS}
   * endpoints the oldest is dropped (pods come and go: a fleet's failures must not pile up).
   */
  deployFailed(endpoint: string, record: ErrorRecord): void {
    const errors = this.errors.deploy;
    errors.delete(endpoint);
    errors.set(endpoint, record);
    if (errors.size > MAX_DEPLOY_ERRORS) errors.delete(errors.keys().next().value!);
  }

  /** An error record for the `errors` variable, stamped now; it also moves `last_error_timestamp`. */
  error(err: unknown, correlationId: string | null): ErrorRecord {
    const at = now();
    this.lastErrorAt = at;
    return { error: shortError(err), timestamp: at, correlation_id: correlationId };
  }
}
