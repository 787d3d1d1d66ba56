import type { Request, Response } from 'express';
import { HttpError } from '../../http/errors';
import { queryString } from '../../http/query';
import { sendJson } from '../../http/send-json';
import { DEFAULT_TRACE_CATEGORIES, recordTrace, traceCategories } from '../trace';
import type { ProfileQuery } from './query';
import { JSON_TYPE, sendHeadOnly } from './respond';
import type { ProfilingRuntime } from './runtime';

/** `?categories=a,b`: known trace categories only. */
async function askedCategories(req: Request): Promise<readonly string[]> {
  const asked = queryString(req, 'categories');
  if (asked === undefined) return DEFAULT_TRACE_CATEGORIES;
  const known = await traceCategories();
  const categories = asked.split(',').map((c) => c.trim());
  const unknown = categories.find((c) => !known.includes(c));
  if (unknown !== undefined || categories.length === 0) {
    throw new HttpError(
      400,
      `query parameter "categories" must be a comma-separated list of ${known.join(', ')}; got ${JSON.stringify((unknown ?? asked).slice(0, 64))}`,
    );
  }
  return categories;
}

/** `/trace`: Node's trace events for `?seconds=`, as Chrome trace JSON. */
export async function serveTrace(rt: ProfilingRuntime, req: Request, res: Response, query: ProfileQuery): Promise<void> {
  const categories = await askedCategories(req);
  if (req.method === 'HEAD') {
    sendHeadOnly(res, JSON_TYPE, 'trace.json');
    return;
  }
  await rt.track(res, async (signal) => {
    const trace = await recordTrace(query.seconds, categories, signal);
    if (!trace || res.destroyed) return;
    // Streamed in slices: a busy second can hold a hundred thousand events.
    await sendJson(req, res, trace, {
      atOnceBudgetMs: 10,
      headers: { 'Content-Disposition': 'attachment; filename="trace.json"' },
    });
  });
}
