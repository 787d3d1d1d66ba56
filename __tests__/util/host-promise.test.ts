import { collector } from '../helpers/gc';
import { awaitHost, callHost } from '../../lib/util/host-promise';
import { withTimeout } from '../../lib/util/with-timeout';

const gc = collector();

/** Bytes still reachable on the heap after full collections. */
function liveHeap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** What a host hands out to every wait: one promise shared by all, or a fresh one each time, all of them kept. */
interface Host {
  next(): Promise<unknown>;
  readonly held: unknown[];
}

const HOSTS: ReadonlyArray<[string, () => Host]> = [
  [
    'one never-settling promise shared by every wait',
    () => {
      const one = never();
      return { next: () => one, held: [one] };
    },
  ],
  [
    'a fresh never-settling promise per wait, every one kept by the host',
    () => {
      const held: unknown[] = [];
      return {
        next() {
          const p = never();
          held.push(p);
          return p;
        },
        held,
      };
    },
  ],
];

/**
 * Bytes left reachable per wait once `waits` waits were given up, each from a frame holding 8 KB of
 * its own (an abandoned scrape's state, say), after a warm-up round of the same.
 */
async function retainedPerWait(host: Host, waits: number, wait: (host: Host) => Promise<unknown>): Promise<number> {
  const round = async (count: number): Promise<void> => {
    for (let done = 0; done < count; done += 200) {
      await Promise.all(
        Array.from({ length: Math.min(200, count - done) }, async (_, i) => {
          const state = new Array<number>(1000).fill(i);
          await wait(host).catch(() => undefined);
          return state.length;
        }),
      );
    }
  };
  await round(200);
  const before = liveHeap();
  await round(waits);
  const after = liveHeap();
  expect(host.held.length).toBeGreaterThan(0);
  return (after - before) / waits;
}

describe('waits given up on a host promise leave nothing attached to it', () => {
  // Measured without the forwarding (Promise.race, as withTimeout did): 1 268 bytes per timed-out
  // wait on a shared promise, growing for as long as the promise lives.
  it.each(HOSTS)('awaitHost, aborted, 1 500 times: %s', async (label, make) => {
    const perWait = await retainedPerWait(make(), 1500, (host) => {
      const left = new AbortController();
      const waiting = awaitHost(host.next(), left.signal);
      setImmediate(() => left.abort(new Error('client left')));
      return waiting;
    });
    // Shared: nothing per wait (noise only). Fresh: the host's own promise and its one forwarding
    // (about 550 bytes), never the 8 KB the abandoned frame held.
    expect(perWait).toBeLessThan(label.startsWith('one') ? 250 : 1500);
  });

  it.each(HOSTS)('withTimeout, timed out, 1 200 times: %s', async (label, make) => {
    const perWait = await retainedPerWait(make(), 1200, (host) =>
      withTimeout(
        () => host.next(),
        1,
        () => new Error('timed out'),
      ),
    );
    expect(perWait).toBeLessThan(label.startsWith('one') ? 250 : 1500);
  });

  it('withTimeout gives the wait up at once when its signal aborts', async () => {
    const left = new AbortController();
    const waiting = withTimeout(never, 2000, () => new Error('timed out'), left.signal);
    const reason = new Error('client left');
    left.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });
});

describe('awaitHost and callHost', () => {
  it('forwards a value or a rejection to every wait still on the promise, not to one given up', async () => {
    let settle!: (v: string) => void;
    const shared = new Promise<string>((resolve) => (settle = resolve));
    const left = new AbortController();
    const a = awaitHost(shared);
    const gone = awaitHost(shared, left.signal);
    const b = awaitHost(shared, new AbortController().signal);
    left.abort(new Error('left'));
    settle('value');
    await expect(a).resolves.toBe('value');
    await expect(b).resolves.toBe('value');
    await expect(gone).rejects.toThrow('left');
    await expect(awaitHost(Promise.reject(new RangeError('failed')))).rejects.toThrow(RangeError);
  });

  it("adopts a foreign thenable once, however many wait on it, and a throwing 'then' becomes a rejection", async () => {
    let callbacks = 0;
    let resolveIt!: (v: number) => void;
    const thenable = {
      then(resolve: (v: number) => void): void {
        callbacks += 1;
        resolveIt = resolve;
      },
    } as unknown as PromiseLike<number>;
    const waits = [awaitHost(thenable), awaitHost(thenable), awaitHost(thenable)];
    await new Promise((resolve) => setImmediate(resolve));
    resolveIt(7);
    await expect(Promise.all(waits)).resolves.toEqual([7, 7, 7]);
    expect(callbacks).toBe(1);
    const broken = {
      get then(): () => void {
        throw new Error('then getter threw');
      },
    };
    await expect(callHost(() => broken)).rejects.toThrow('then getter threw');
  });

  it('turns a synchronous throw into a rejection and passes plain values through', async () => {
    await expect(
      callHost(() => {
        throw new TypeError('sync');
      }),
    ).rejects.toThrow(TypeError);
    await expect(callHost(() => 42)).resolves.toBe(42);
    await expect(callHost(() => Promise.resolve('async'))).resolves.toBe('async');
  });

  it('rejects at once, attaching nothing, when the signal was aborted before the wait', async () => {
    let asked = 0;
    const thenable = {
      then(): void {
        asked += 1;
      },
    } as unknown as PromiseLike<unknown>;
    const left = new AbortController();
    left.abort(new Error('gone already'));
    await expect(awaitHost(thenable, left.signal)).rejects.toThrow('gone already');
    expect(asked).toBe(0);
  });
});
