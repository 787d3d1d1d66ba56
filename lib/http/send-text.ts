import type { Request, Response } from 'express';
import { setNoStoreHeaders } from './headers';
import { OutputGuard } from '../json-stream/output';
import { cooperativeTicker } from '../util/cooperative';

const WRITE_CHARS = 64 * 1024;

/**
 * Answers a small body whole, with `status`, no caching, and `Content-Length`; HEAD gets the
 * headers only. Not Express's `res.send()`/`res.json()`: on a 200 they add an ETag and compare it
 * with the request's `If-None-Match`, parsed whole by Express (a 16 MB one, which a host's raised
 * `maxHeaderSize` lets through, held the loop 290 ms to 770 ms). Nothing here reads the request's
 * headers.
 */
export function sendWhole(
  req: Request,
  res: Response,
  status: number,
  contentType: string,
  body: string | Buffer,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.status(status);
  setNoStoreHeaders(res);
  res.setHeader('Content-Type', contentType);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.setHeader('Content-Length', typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/**
 * Answers text given in pieces, writing each as it is and following back-pressure: a 10 MB answer
 * is never joined, encoded or hashed (an ETag) in one synchronous step. A client that goes away
 * stops the writing. HEAD answers the headers only.
 */
export async function sendTextPieces(req: Request, res: Response, pieces: readonly string[]): Promise<void> {
  // Measuring 10 MB of text is itself several milliseconds: in turns too, a piece at a time.
  const tick = cooperativeTicker(undefined, 1);
  let length = 0;
  for (const piece of pieces) {
    length += Buffer.byteLength(piece, 'utf8');
    const pause = tick();
    if (pause) await pause;
  }
  res.status(200);
  setNoStoreHeaders(res);
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Length', length);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const guard = new OutputGuard(res, undefined);
  try {
    for (const piece of pieces) {
      // A long piece (a 6 MB rendered configuration) goes out in writes of at most WRITE_CHARS,
      // each encoded on its own, never splitting a surrogate pair.
      for (let start = 0; start < piece.length;) {
        let end = Math.min(piece.length, start + WRITE_CHARS);
        const last = piece.charCodeAt(end - 1);
        if (end < piece.length && last >= 0xd800 && last <= 0xdbff) end--;
        guard.check();
        if (!res.write(piece.slice(start, end))) await guard.drain();
        start = end;
      }
    }
    res.end();
  } catch {
    // The client left: nothing is left to answer.
    res.destroy();
  } finally {
    guard.dispose();
  }
}
