import type { Request, Response } from 'express';
import { estimateJsonSize, writeJson } from './json-stream';
import { setNoStoreHeaders } from './headers';
import { watchClientGone } from './client-gone';

/** Options of {@link sendJson}. */
export interface SendJsonOptions {
  /** Bodies estimated above this many bytes are streamed in time slices. */
  streamThresholdBytes: number;
  /** Optional replacer applied while serialising (used for redaction). */
  replacer?: (key: string, value: unknown) => unknown;
  /** Extra response headers. */
  headers?: Readonly<Record<string, string>>;
}

/**
 * Answers `value` as JSON. Small bodies go out in one `JSON.stringify`; large ones are streamed in
 * slices that yield to the event loop and follow back-pressure, so a 50 MB dump never stalls the
 * host. A client that goes away aborts the stream at once. HEAD answers the headers only.
 */
export async function sendJson(req: Request, res: Response, value: unknown, options: SendJsonOptions): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  setNoStoreHeaders(res);
  for (const [name, v] of Object.entries(options.headers ?? {})) res.setHeader(name, v);

  const size = estimateJsonSize(value, options.streamThresholdBytes);
  const body = size.exceeds ? undefined : stringifySmall(value, options.replacer);
  if (body !== undefined) {
    res.setHeader('Content-Length', Buffer.byteLength(body));
    res.end(req.method === 'HEAD' ? undefined : body);
    return;
  }
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const gone = watchClientGone(res);
  const abort = gone.controller;
  try {
    // The size estimate just serialised up to the threshold synchronously: give the event loop a
    // turn before the stream's first slice, so the two never add up to one long stall.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await writeJson(res, value, { signal: abort.signal, replacer: options.replacer });
    res.end();
  } catch (err) {
    // Nothing sent yet (a problem within the first chunk): the caller can still answer a clean error.
    if (!abort.signal.aborted && !res.headersSent) throw err;
    // Headers are out: the only honest signal left is to cut the connection, never a truncated 200.
    res.destroy();
    if (!abort.signal.aborted) throw err;
  } finally {
    gone.release();
  }
}

/**
 * `JSON.stringify` for a value known to be small, or `undefined` when it nests deeper than
 * `JSON.stringify`'s recursion allows (a small but very deep value): the streaming writer, which
 * walks iteratively, then serves it instead of a "Maximum call stack size exceeded" 500.
 */
function stringifySmall(value: unknown, replacer: SendJsonOptions['replacer']): string | undefined {
  try {
    return JSON.stringify(value, replacer) ?? 'null';
  } catch (err) {
    if (err instanceof RangeError) return undefined;
    throw err;
  }
}
