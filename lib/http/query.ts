import type { Request } from 'express';
import { quoteText } from '../util/cut-text';
import { HttpError } from './errors';

/**
 * The request's query, parsed by us from the raw URL rather than taken from `req.query`: the
 * host's `query parser` setting (Express 4's `qs` "extended" default, Express 5's "simple", a
 * custom function or none at all) must not change what `?field=` or `?seconds=` mean.
 */
const parsed = new WeakMap<Request, URLSearchParams>();

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
