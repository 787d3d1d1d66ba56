/**
 * Clients that leave: a request sent over a real socket and hung up on at a chosen moment, and an
 * app that tells when the server saw it go, so a test can count the work done after that.
 */
import express from 'express';
import type http from 'node:http';
import { eventually } from './eventually';
import { request } from './http';

/** An app around the router under test that counts the responses that closed, served or not. */
export interface ClosingApp {
  readonly app: express.Express;
  /** Requests that reached the app so far. */
  arrived(): number;
  /** Responses closed so far (a client that left, or an answer sent). */
  closed(): number;
}

/**
 * Mounts `inner` behind a middleware that counts closes and, with `delayMs`, first waits that long
 * (a host's middleware that awaits something: the client may leave before the router runs).
 */
export function closingApp(inner: express.RequestHandler | http.RequestListener, delayMs = 0): ClosingApp {
  let closes = 0;
  let arrivals = 0;
  const app = express();
  app.use((_req, res, next) => {
    arrivals += 1;
    res.on('close', () => {
      closes += 1;
    });
    if (delayMs > 0) setTimeout(next, delayMs);
    else next();
  });
  app.use(inner as express.RequestHandler);
  return { app, arrived: () => arrivals, closed: () => closes };
}

/**
 * Sends `GET url` and hangs up once `ready()` is true (checked every millisecond or so), then waits
 * until the server has seen the close: whatever runs for that request from then on runs for nobody.
 */
export async function leaveWhen(
  url: string,
  ready: () => boolean,
  served: ClosingApp,
  headers: http.OutgoingHttpHeaders = {},
): Promise<void> {
  const closedBefore = served.closed();
  const hangUp = new AbortController();
  const answered = request(url, { headers, signal: hangUp.signal }).then(
    (res) => `answered ${res.status} before the client left`,
    () => undefined,
  );
  await eventually(ready, { intervalMs: 1, what: 'the work to start' });
  hangUp.abort();
  const early = await answered;
  if (early !== undefined) throw new Error(early);
  await eventually(() => served.closed() > closedBefore, { intervalMs: 1, what: 'the server to see the client leave' });
}

/** Lets `ms` pass with the event loop turning: work still scheduled gets every chance to run. */
export async function quietFor(ms: number): Promise<void> {
  const until = performance.now() + ms;
  while (performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 2));
}

/**
 * Counts calls to `target[method]` (a prototype's method: every instance's calls), still calling it:
 * work done, counted without keeping the arguments. Restored by `jest.restoreAllMocks()`.
 */
export function countCalls<T extends object>(target: T, method: keyof T & string): { count(): number; reset(): void } {
  let calls = 0;
  const original = target[method] as unknown as (...args: unknown[]) => unknown;
  jest.spyOn(target, method as never).mockImplementation(function (this: unknown, ...args: unknown[]) {
    calls += 1;
    return original.apply(this, args);
  } as never);
  return {
    count: () => calls,
    reset: () => {
      calls = 0;
    },
  };
}

/**
 * {@link countCalls} afresh in every test of the file that calls it at its top level (set up and
 * restored around each test): the calls of the current test so far.
 */
export function countCallsPerTest<T extends object>(target: T, method: keyof T & string): { count(): number; reset(): void } {
  let counter: { count(): number; reset(): void } | undefined;
  beforeEach(() => {
    counter = countCalls(target, method);
  });
  afterEach(() => jest.restoreAllMocks());
  return { count: () => counter?.count() ?? 0, reset: () => counter?.reset() };
}
