import type { Request, Response } from 'express';
import { HttpError } from '../../http/errors';
import { queryString } from '../../http/query';
import { sendJson } from '../../http/send-json';
import {
  DEFAULT_TRACE_CATEGORIES,
  TraceCategoryError,
  TraceConflictError,
  parseTraceCategories,
  recordTrace,
  traceCategories,
  type TraceCategory,
} from '../trace';
import { parseProfileQuery } from './query';
import { JSON_TYPE, sendHeadOnly } from './respond';
import type { ProfilingRuntime } from './runtime';

/** What `/trace` answers while the endpoint is off (the default). */
export const TRACE_OFF =
  "the trace endpoint is off: recording Node's trace events costs the host memory and event-loop time (see the index for the measured cost), so the host turns it on with pprof option trace: true (or trace: { maxSeconds, maxEvents, maxBytes })";

/** `?categories=a,b`: allowed categories only, each checked (see {@link parseTraceCategories}). */
async function askedCategories(req: Request): Promise<readonly TraceCategory[]> {
  const asked = queryString(req, 'categories');
  if (asked === undefined) return DEFAULT_TRACE_CATEGORIES;
  try {
    return parseTraceCategories(asked, await traceCategories());
  } catch (err) {
    if (err instanceof TraceCategoryError) throw new HttpError(400, `query parameter "categories": ${err.message}`);
    throw err;
  }
}

/** `/trace`: Node's trace events for `?seconds=`, as Chrome trace JSON; 404 while the host has not turned it on. */
export async function serveTrace(rt: ProfilingRuntime, req: Request, res: Response): Promise<void> {
  const limits = rt.options.trace;
  if (limits === false) throw new HttpError(404, TRACE_OFF);
  // Go's trace defaults to one second: a trace grows fast.
  const query = parseProfileQuery(req, 'trace', rt.formatsOf('trace'), { defaultSeconds: 1, maxSeconds: limits.maxSeconds });
  const categories = await askedCategories(req);
  if (req.method === 'HEAD') {
    sendHeadOnly(res, JSON_TYPE, 'trace.json');
    return;
  }
  await rt.track(res, async (signal) => {
    let trace;
    try {
      trace = await recordTrace(query.seconds, categories, limits, signal);
    } catch (err) {
      if (err instanceof TraceConflictError) throw new HttpError(409, err.message);
      throw err;
    }
    if (!trace || res.destroyed) return;
    // Streamed in slices: a trace can hold a hundred thousand events.
    await sendJson(req, res, trace, {
      atOnceBudgetMs: 5,
      headers: { 'Content-Disposition': 'attachment; filename="trace.json"' },
    });
  });
}
