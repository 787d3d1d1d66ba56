import { Router, type Request, type Response } from 'express';
import { handle, HttpError } from '../http/errors';
import { cutText, quoteText } from '../util/cut-text';
import { errorMessage } from '../util/error-message';
import { queryFlag, queryList } from '../http/query';
import type { IntrospectionStateReader, RegisteredHealthCheck } from '../state/types';
import { withTimeout } from '../util/with-timeout';
import { sendWhole } from '../http/send-text';

/** Options of the health endpoints. */
export interface HealthOptions {
  /** How long one check may take before it counts as failed. Default 2000 ms. */
  checkTimeoutMs: number;
}

/** The outcome of one check, as `/healthz` reports it. */
export interface CheckOutcome {
  status: 'ok' | 'failed';
  error?: string;
  /** What a passing check reported about itself (for example when progress was last seen). */
  detail?: string;
}

type Kind = 'healthz' | 'livez' | 'readyz';

interface NamedOutcome extends CheckOutcome {
  name: string;
}

const TEXT_TYPE = 'text/plain; charset=utf-8';

/** Longest error text reported per check: a probe body is no place for a stack dump. */
const MAX_CHECK_MESSAGE = 256;

function isReport(value: unknown): value is { ok: unknown; detail?: unknown } {
  return typeof value === 'object' && value !== null && 'ok' in value;
}

async function runCheck(check: RegisteredHealthCheck, timeoutMs: number): Promise<NamedOutcome> {
  try {
    const result = await withTimeout(check.check, timeoutMs, () => new Error(`timed out after ${timeoutMs} ms`));
    if (result === false) return { name: check.name, status: 'failed', error: 'check reported unhealthy' };
    if (isReport(result)) {
      const detail = typeof result.detail === 'string' && result.detail !== '' ? cutText(result.detail, MAX_CHECK_MESSAGE) : undefined;
      if (result.ok === true) return detail === undefined ? { name: check.name, status: 'ok' } : { name: check.name, status: 'ok', detail };
      return { name: check.name, status: 'failed', error: detail ?? 'check reported unhealthy' };
    }
    return { name: check.name, status: 'ok' };
  } catch (err) {
    return { name: check.name, status: 'failed', error: cutText(errorMessage(err), MAX_CHECK_MESSAGE) || 'check failed' };
  }
}

function builtinNames(state: IntrospectionStateReader, kind: Kind): string[] {
  return kind === 'livez' ? ['ping'] : ['ping', 'shutdown', ...state.readinessGates().map((g) => g.name)];
}

function checksFor(state: IntrospectionStateReader, kind: Kind): readonly RegisteredHealthCheck[] {
  return state.healthChecks().filter((c) => (kind === 'livez' ? c.livez : kind === 'readyz' ? c.readyz : c.livez || c.readyz));
}

/**
 * Runs the checks that count for `kind`, concurrently, with the Kubernetes built-ins first:
 * `ping` always passes; `shutdown` (readiness only) fails once the host is shutting down, so
 * traffic drains while liveness stays green; then the readiness gates (readiness only), each
 * failing with its reason while closed.
 */
async function evaluate(state: IntrospectionStateReader, kind: Kind, options: HealthOptions, only?: string): Promise<NamedOutcome[]> {
  const builtins: NamedOutcome[] = [{ name: 'ping', status: 'ok' }];
  if (kind !== 'livez') {
    const reason = state.shutdownReason();
    builtins.push(
      reason === undefined
        ? { name: 'shutdown', status: 'ok' }
        : { name: 'shutdown', status: 'failed', error: cutText(reason, MAX_CHECK_MESSAGE) },
    );
    for (const gate of state.readinessGates()) {
      builtins.push(
        gate.open
          ? { name: gate.name, status: 'ok' }
          : { name: gate.name, status: 'failed', error: cutText(`not open: ${gate.reason}`, MAX_CHECK_MESSAGE) },
      );
    }
  }
  const checks = checksFor(state, kind);
  const filteredBuiltins = only === undefined ? builtins : builtins.filter((b) => b.name === only);
  const filteredChecks = only === undefined ? checks : checks.filter((c) => c.name === only);
  const outcomes = await Promise.all(filteredChecks.map((c) => runCheck(c, options.checkTimeoutMs)));
  return [...filteredBuiltins, ...outcomes];
}

/**
 * Answers a Kubernetes-style text health body: `ok`, or with `?verbose` one `[+]name ok` /
 * `[-]name failed: reason` line per check and a closing summary line.
 */
function sendTextHealth(req: Request, res: Response, kind: Kind, outcomes: NamedOutcome[], excluded: string[]): void {
  const failed = outcomes.some((o) => o.status === 'failed');
  const status = failed ? 503 : 200;
  if (!failed && !queryFlag(req, 'verbose')) {
    sendWhole(req, res, status, TEXT_TYPE, 'ok');
    return;
  }
  const lines = outcomes.map((o) =>
    o.status === 'failed'
      ? `[-]${o.name} failed: ${o.error ?? 'failed'}`
      : o.detail === undefined
        ? `[+]${o.name} ok`
        : `[+]${o.name} ok (${o.detail})`,
  );
  for (const name of excluded) lines.push(`warn: some health checks cannot be excluded: no matches for ${quoteText(name, 64)}`);
  lines.push(failed ? `${kind} check failed` : `${kind} check passed`);
  sendWhole(req, res, status, TEXT_TYPE, `${lines.join('\n')}\n`);
}

/** Answers a JSON health body (small: one entry per check, each message cut). */
function sendJsonHealth(req: Request, res: Response, status: number, body: object): void {
  sendWhole(req, res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

/** Splits `?exclude=` names into the outcomes that remain and the names that matched nothing. */
function applyExcludes(outcomes: NamedOutcome[], excludes: string[]): { kept: NamedOutcome[]; unmatched: string[] } {
  const names = new Set(outcomes.map((o) => o.name));
  const skip = new Set(excludes);
  return { kept: outcomes.filter((o) => !skip.has(o.name)), unmatched: excludes.filter((e) => !names.has(e)) };
}

/**
 * `/healthz` (JSON, for Kubernetes probes and for people), `/livez` and `/readyz` (text, the
 * Kubernetes API server's conventions: `?verbose`, `?exclude=`, and `/<kind>/<check>`).
 */
export function createHealthRouter(state: IntrospectionStateReader, options: HealthOptions): Router {
  const router = Router();

  router.get(
    '/healthz',
    handle(async function healthz(req: Request, res: Response): Promise<void> {
      const { kept } = applyExcludes(await evaluate(state, 'healthz', options), queryList(req, 'exclude'));
      const failed = kept.filter((o) => o.status === 'failed');
      if (failed.length === 0 && !queryFlag(req, 'verbose')) {
        sendJsonHealth(req, res, 200, { status: 'ok' });
        return;
      }
      // Object.fromEntries defines every check's name as an own key: a host's own state may name a
      // check `__proto__`, which an assignment would turn into the object's prototype.
      const checks: Record<string, CheckOutcome> = Object.fromEntries(kept.map(({ name, ...outcome }) => [name, outcome]));
      if (failed.length === 0) {
        sendJsonHealth(req, res, 200, { status: 'ok', checks });
        return;
      }
      sendJsonHealth(req, res, 503, { status: 'failed', error: `health check failed: ${failed.map((f) => f.name).join(', ')}`, checks });
    }),
  );

  for (const kind of ['livez', 'readyz'] as const) {
    router.get(
      `/${kind}`,
      handle(async function aggregateProbe(req: Request, res: Response): Promise<void> {
        const { kept, unmatched } = applyExcludes(await evaluate(state, kind, options), queryList(req, 'exclude'));
        sendTextHealth(req, res, kind, kept, unmatched);
      }),
    );
    router.get(
      `/${kind}/:check`,
      handle(async function singleProbe(req: Request, res: Response): Promise<void> {
        const name = String(req.params['check']);
        const outcomes = await evaluate(state, kind, options, name);
        if (outcomes.length === 0) {
          const known = [...builtinNames(state, kind), ...checksFor(state, kind).map((c) => c.name)];
          throw new HttpError(404, `no ${kind} check named ${quoteText(name, 64)}; known checks: ${known.join(', ')}`);
        }
        sendTextHealth(req, res, kind, outcomes, []);
      }),
    );
  }
  return router;
}
