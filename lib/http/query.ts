import type { Request } from 'express';
import { HttpError } from './errors';

/**
 * Reads a single-valued query parameter. A parameter given twice (`?a=1&a=2`) or in bracket form
 * is a client mistake, answered `400` rather than silently picking one.
 */
export function queryString(req: Request, name: string): string | undefined {
  const value: unknown = req.query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new HttpError(400, `query parameter "${name}" must be given once, as a plain string`);
  return value;
}

/** Reads an optional non-negative integer query parameter, with a clear `400` otherwise. */
export function queryInteger(req: Request, name: string, range: { min: number; max: number }): number | undefined {
  const text = queryString(req, name);
  if (text === undefined) return undefined;
  if (!/^\d{1,15}$/.test(text)) throw new HttpError(400, `query parameter "${name}" must be an integer from ${range.min} to ${range.max}, got ${JSON.stringify(text.slice(0, 32))}`);
  const value = Number(text);
  if (value < range.min || value > range.max) {
    throw new HttpError(400, `query parameter "${name}" must be an integer from ${range.min} to ${range.max}, got ${value}`);
  }
  return value;
}

/** Whether a flag-style parameter such as `?verbose` or `?verbose=1` is on. */
export function queryFlag(req: Request, name: string): boolean {
  const value: unknown = req.query[name];
  if (value === undefined) return false;
  const text = Array.isArray(value) ? value[value.length - 1] : value;
  return text !== '0' && text !== 'false';
}

/** Every value of a repeatable parameter such as `?exclude=a&exclude=b`. */
export function queryList(req: Request, name: string): string[] {
  const value: unknown = req.query[name];
  if (value === undefined) return [];
  const values = Array.isArray(value) ? value : [value];
  return values.filter((v): v is string => typeof v === 'string');
}
