import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { cutText, MAX_ECHOED_MESSAGE } from '../util/cut-text';
import { errorMessage } from '../util/error-message';
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
  /**
   * `message` is sent to the client as it is, as `{"error": message}`: keep secrets and unbounded
   * client input out of it.
   */
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
  // A client that has gone gets nothing.
  if (res.destroyed || res.writableEnded) return;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.status(status);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  setNoStoreHeaders(res);
  res.type('application/json').send(JSON.stringify({ error: message }));
}

/**
 * How a router turns the errors of the engines it uses (which know nothing of HTTP) into statuses:
 * an {@link HttpError} for the errors it knows, `undefined` for the rest.
 */
export type ErrorStatuses = (err: unknown) => HttpError | undefined;

/**
 * The status of anything thrown: an {@link HttpError} as it is, an engine error as the router maps
 * it, a 4xx Express raised before a handler ran (a path with invalid percent-encoding) as a bad
 * request, anything else as `500` with its message (never its stack), cut to a readable head: a
 * thrown message is host text, as long as the host made it.
 */
function toHttpError(err: unknown, statuses: ErrorStatuses): HttpError {
  if (err instanceof HttpError) return err;
  const mapped = statuses(err);
  if (mapped !== undefined) return mapped;
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === 'number' && Number.isInteger(status) && status >= 400 && status < 500) {
    return new HttpError(status, `bad request: ${cutText(errorMessage(err), 200)}`);
  }
  return new HttpError(500, cutText(errorMessage(err), MAX_ECHOED_MESSAGE) || 'internal error');
}

/**
 * A router's one error middleware: handlers throw (or reject) and this answers, in JSON, with the
 * status `statuses` gives. Mounted last on each router so that nothing reaches the host's default
 * handler, which answers HTML with a stack trace outside production.
 */
export function answerErrors(statuses: ErrorStatuses = () => undefined): ErrorRequestHandler {
  return function answerError(err: unknown, _req: Request, res: Response, _next: NextFunction): void {
    let http: HttpError;
    try {
      http = toHttpError(err, statuses);
    } catch {
      // A thrown value whose getters throw (`status`, a Proxy's prototype) must not reach the
      // host's default handler, which answers HTML with a stack trace.
      http = new HttpError(500, 'internal error (the thrown value could not be read)');
    }
    sendError(res, http.status, http.message, http.headers);
  };
}

/**
 * Lets a handler throw or reject under Express 4 as under Express 5 (4 does not forward a
 * rejected promise): whatever it throws goes to the router's error middleware.
 */
export function handle(run: (req: Request, res: Response) => void | Promise<void>): RequestHandler {
  const handled = function (req: Request, res: Response, next: NextFunction): void {
    let pending: void | Promise<void>;
    try {
      pending = run(req, res);
    } catch (err) {
      next(err);
      return;
    }
    if (pending instanceof Promise) pending.catch(next);
  };
  Object.defineProperty(handled, 'name', { value: run.name || 'handled' });
  return handled;
}
