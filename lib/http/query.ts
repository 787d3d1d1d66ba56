import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { quoteText } from '../util/cut-text';
import { HttpError, sendError } from './errors';

/**
 * The request's query, parsed by us from the raw URL rather than taken from `req.query`: the
 * host's `query parser` setting (Express 4's `qs` "extended" default, Express 5's "simple", a
 * custom function or none at all) must not change what `?field=` or `?seconds=` mean.
 */
const parsed = new WeakMap<Request, URLSearchParams>();

/**
 * The longest query string a router parses by default, in characters. Parsing costs 40 to 100 ns
 * a character (a 16 MB query, which a host's raised `maxHeaderSize` lets through, held the loop
 * 0.7 s to 7 s); this many cost 1 to 3 ms.
 */
export const MAX_QUERY_CHARS = 64 * 1024;

/**
 * Refuses, before anything parses it, a request whose query string is longer than `maxChars`:
 * `413`, as a `?field=` template over its length limit is, naming the limit (and what `hint` adds,
 * after a `;`). Mounted first on each router that reads queries; `owns` (as for `readOnly`) keeps
 * it off the host's own paths.
 */
export function boundQuery(maxChars: number, owns?: (path: string) => boolean, hint = ''): RequestHandler {
  return function refuseLongQuery(req: Request, res: Response, next: NextFunction): void {
    const url = req.originalUrl ?? req.url;
    const mark = url.indexOf('?');
    const length = mark < 0 ? 0 : url.length - mark - 1;
    if (length <= maxChars || (owns !== undefined && !owns(req.path))) {
      next();
      return;
    }
    // Answered here rather than passed on: Express would take the whole URL apart again at each
    // router the error went through on its way to the error middleware.
    sendError(res, 413, `the query string is longer than ${maxChars} characters (${length})${hint}`);
  };
}

function params(req: Request): URLSearchParams {
  let found = parsed.get(req);
  if (found === undefined) {
    const url = req.originalUrl ?? req.url;
    const mark = url.indexOf('?');
    found = new URLSearchParams(mark < 0 ? '' : url.slice(mark + 1));
    parsed.set(req, found);
  }
  return found;
}

/** Whether a query parameter is present at all, in any form (`?a`, `?a=`, `?a[x]=1`). */
export function queryHas(req: Request, name: string): boolean {
  const query = params(req);
  if (query.has(name)) return true;
  for (const key of query.keys()) if (key.startsWith(`${name}[`)) return true;
  return false;
}

/**
 * Reads a single-valued query parameter. A parameter given twice (`?a=1&a=2`) or in bracket form
 * (`?a[x]=1`) is a client mistake, answered `400` rather than silently picking one.
 */
export function queryString(req: Request, name: string): string | undefined {
  const query = params(req);
  const values = query.getAll(name);
  const bracketed = [...query.keys()].some((key) => key.startsWith(`${name}[`));
  if (values.length === 0 && !bracketed) return undefined;
  if (values.length !== 1 || bracketed) throw new HttpError(400, `query parameter "${name}" must be given once, as a plain string`);
  return values[0];
}

/** Reads an optional non-negative integer query parameter, with a clear `400` otherwise. */
export function queryInteger(req: Request, name: string, range: { min: number; max: number }): number | undefined {
  const text = queryString(req, name);
  if (text === undefined) return undefined;
  if (!/^\d{1,15}$/.test(text))
    throw new HttpError(400, `query parameter "${name}" must be an integer from ${range.min} to ${range.max}, got ${quoteText(text, 32)}`);
  const value = Number(text);
  if (value < range.min || value > range.max) {
    throw new HttpError(400, `query parameter "${name}" must be an integer from ${range.min} to ${range.max}, got ${value}`);
  }
  return value;
}

/** Whether a flag-style parameter such as `?verbose` or `?verbose=1` is on. */
export function queryFlag(req: Request, name: string): boolean {
  const values = params(req).getAll(name);
  if (values.length === 0) return false;
  const text = values[values.length - 1];
  return text !== '0' && text !== 'false';
}

/** Every value of a repeatable parameter such as `?exclude=a&exclude=b`. */
export function queryList(req: Request, name: string): string[] {
  return params(req).getAll(name);
}
