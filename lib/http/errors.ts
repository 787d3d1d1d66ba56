import type { Response } from 'express';
import { setNoStoreHeaders } from './headers';

/**
 * An error that knows its HTTP status. Anything thrown while answering a request that is not an
 * `HttpError` is answered as `500` with its message (never its stack).
 */
export class HttpError extends Error {
  /** The HTTP status to answer with. */
  readonly status: number;
  /** Extra response headers, for example `Allow` on a 405. */
  readonly headers: Readonly<Record<string, string>>;
  constructor(status: number, message: string, headers: Readonly<Record<string, string>> = {}) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.headers = headers;
  }
}

/**
 * The one way this package answers an error: JSON `{"error": "..."}` with the given status, no
 * caching. Safe to call after headers were sent (the connection is then destroyed instead, since a
 * half-written body cannot be turned into an error).
 */
export function sendError(res: Response, status: number, message: string, headers: Readonly<Record<string, string>> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.status(status);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  setNoStoreHeaders(res);
  res.type('application/json').send(JSON.stringify({ error: message }));
}

/** Answers any thrown value: an {@link HttpError} with its status, anything else as `500`. */
export function sendThrown(res: Response, err: unknown): void {
  if (err instanceof HttpError) {
    sendError(res, err.status, err.message, err.headers);
    return;
  }
  const message = err instanceof Error ? err.message : String(err);
  sendError(res, 500, message || 'internal error');
}
