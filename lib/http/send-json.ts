import type { Request, Response } from 'express';
import { serializeAtOnce, writeJson } from '../json-stream/index';
import { nextTurn } from '../util/cooperative';
import { setNoStoreHeaders } from './headers';
import { watchClientGone } from './client-gone';

/** Options of {@link sendJson}. */
export interface SendJsonOptions {
  /** Bodies whose serialisation is expected to take longer than this (ms) are streamed in time slices; 0 streams every body. */
  atOnceBudgetMs: number;
  /** Extra response headers. */
  headers?: Readonly<Record<string, string>>;
  /** Lengths of earlier answers, to stream a known-large body without walking it first. */
  sizeHints?: SizeHints;
}

// URLs longer than this are not remembered: a hint is worth less than the memory of hostile URLs.
const MAX_HINT_KEY = 2048;

/**
 * The lengths of recent answers by request URL. A URL that answered megabytes last time is likely
 * to again, so its next answer is streamed at once instead of being walked up to the one-shot
 * budget first; a hint only ever leads to streaming, which is safe for any size. Bounded: the
 * oldest entry goes when a new URL would exceed the capacity.
 */
export class SizeHints {
  private readonly sizes = new Map<string, number>();

  constructor(private readonly capacity = 256) {}

  /** The length last answered for `url`, if remembered. */
  get(url: string): number | undefined {
    return this.sizes.get(url);
  }

  /** Remembers the length answered for `url`. */
  set(url: string, bytes: number): void {
    if (url.length > MAX_HINT_KEY) return;
    // Deleted first so that a URL answered again counts as the newest.
    if (!this.sizes.delete(url) && this.sizes.size >= this.capacity) {
      const oldest = this.sizes.keys().next();
      if (oldest.done !== true) this.sizes.delete(oldest.value);
    }
    this.sizes.set(url, bytes);
  }
}

/**
 * Answers `value` as JSON (the text of `JSON.stringify`, but `-0` keeps its sign). Small bodies
 * go out at once, serialized while being measured; large ones are streamed in
 * slices that yield to the event loop and follow back-pressure, so a 50 MB dump never stalls the
 * host. A client that goes away aborts the stream at once; one already gone gets nothing, not even
 * a serialisation. HEAD answers the headers only.
 */
export async function sendJson(req: Request, res: Response, value: unknown, options: SendJsonOptions): Promise<void> {
  if (res.destroyed) return;
  res.status(200);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  setNoStoreHeaders(res);
  for (const [name, v] of Object.entries(options.headers ?? {})) res.setHeader(name, v);

  const hints = options.sizeHints;
  const url = req.originalUrl;
  const atOnce = serializeAtOnce(value, {
    budgetMs: options.atOnceBudgetMs,
    expectedBytes: hints?.get(url),
  });
  if (atOnce !== undefined) {
    hints?.set(url, atOnce.body.length);
    res.setHeader('Content-Length', atOnce.body.length);
    res.end(req.method === 'HEAD' ? undefined : atOnce.body);
    return;
  }
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const gone = watchClientGone(res);
  const abort = gone.controller;
  try {
    // Deciding just walked up to the budget synchronously: give the event loop a turn before the
    // stream's first slice, so the two never add up to one long stall.
    await nextTurn({ signal: abort.signal });
    const written = await writeJson(res, value, { signal: abort.signal });
    hints?.set(url, written);
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
