/**
 * How a handler learns that its client left: the response closing unfinished, the client closing
 * its side of the connection (which Node answers by ending ours, unless the host allows half-open
 * connections), a client gone before the handler ran, and one that asks and hangs up at once.
 */
import express from 'express';
import net from 'node:net';
import { stillThere, watchClientGone } from '../../lib/http/client-gone';
import { eventually } from '../helpers/eventually';
import { closeAllListening, listen, request } from '../helpers/http';

afterEach(closeAllListening);

interface Seen {
  /** Whether the client was there after stillThere(). */
  there?: boolean;
  /** Whether the signal aborted within the handler's wait. */
  aborted?: boolean;
}

/**
 * An app whose one route watches its client, waits `holdMs` (work in progress), then answers "done"
 * unless the client left; `delayMs` is a host middleware that awaits something first.
 */
async function serve(options: { holdMs?: number; delayMs?: number; halfOpen?: boolean } = {}): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const app = express();
  if (options.delayMs) app.use((_req, _res, next) => void setTimeout(next, options.delayMs));
  app.get('/work', async (_req, res) => {
    const entry: Seen = {};
    seen.push(entry);
    const gone = watchClientGone(res);
    entry.there = await stillThere(res, gone);
    await new Promise<void>((resolve) => {
      if (gone.controller.signal.aborted) {
        resolve();
        return;
      }
      const timer = setTimeout(resolve, options.holdMs ?? 0);
      gone.controller.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    entry.aborted = gone.controller.signal.aborted;
    gone.release();
    if (!entry.aborted) res.end('done');
  });
  const served = await listen(app);
  // Undocumented in the types, read by node:http on every hang-up: the host keeps half-open connections.
  if (options.halfOpen) (served.server as { httpAllowHalfOpen?: boolean }).httpAllowHalfOpen = true;
  return { port: served.port, seen };
}

/** Sends GET /work on a raw socket, then `after(socket)`; resolves with what came back once it closed. */
function raw(port: number, after: (socket: net.Socket) => void): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(text));
    socket.write('GET /work HTTP/1.1\r\nHost: test\r\n\r\n', () => after(socket));
  });
}

/** Resolves once the handler has passed stillThere() and is at work. */
function atWork(seen: Seen[]): Promise<unknown> {
  return eventually(() => seen[0]?.there !== undefined, { intervalMs: 1, what: 'the handler to be at work' });
}

describe('watchClientGone', () => {
  it('aborts when the client closes its side of the connection: Node ends the connection, the answer cannot arrive', async () => {
    const { port, seen } = await serve({ holdMs: 5000 });
    const started = performance.now();
    // Once the handler is at work: whatever the machine's load, the client leaves during the work.
    const answer = await raw(port, (socket) => void atWork(seen).then(() => socket.end()));
    await eventually(() => seen[0]?.aborted !== undefined, { what: 'the handler to finish' });
    expect(seen[0]).toEqual({ there: true, aborted: true });
    expect(answer).toBe('');
    // Seen when the client's end was read, not after the 5 s of work.
    expect(performance.now() - started).toBeLessThan(4000);
  });

  it('does not abort for a half-closed client when the host allows half-open connections: it is answered', async () => {
    const { port, seen } = await serve({ holdMs: 100, halfOpen: true });
    const answer = await raw(port, (socket) => void atWork(seen).then(() => socket.end()));
    expect(seen[0]).toEqual({ there: true, aborted: false });
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\ndone$/);
  });

  it('aborts when the client destroys the connection, and not after an answer completed', async () => {
    const { port, seen } = await serve({ holdMs: 5000 });
    await raw(port, (socket) => void atWork(seen).then(() => socket.destroy()));
    await eventually(() => seen[0]?.aborted !== undefined, { what: 'the handler to finish' });
    expect(seen[0]).toEqual({ there: true, aborted: true });

    const quick = await serve({ holdMs: 0 });
    const res = await request(`http://127.0.0.1:${quick.port}/work`);
    expect(res.text).toBe('done');
    expect(quick.seen[0]).toEqual({ there: true, aborted: false });
  });

  it('is aborted from the start for a client gone before the handler ran', async () => {
    const { port, seen } = await serve({ holdMs: 5000, delayMs: 80 });
    await raw(port, (socket) => setTimeout(() => socket.destroy(), 10));
    await eventually(() => seen[0]?.aborted !== undefined, { what: 'the handler to finish' });
    expect(seen[0]).toEqual({ there: false, aborted: true });
  });
});

describe('stillThere', () => {
  it.each([
    ['hangs up at once (destroy)', (socket: net.Socket) => socket.destroy()],
    ['closes its side at once (end)', (socket: net.Socket) => socket.end()],
  ])('answers false for a client that asks and %s', async (_label, leave) => {
    const { port, seen } = await serve({ holdMs: 5000 });
    await raw(port, leave);
    await eventually(() => seen[0]?.aborted !== undefined, { what: 'the handler to finish' });
    expect(seen[0]).toEqual({ there: false, aborted: true });
  });
});
