import { createWorkLimiter } from '../../lib/http/work-limiter';

describe('createWorkLimiter', () => {
  it('runs up to the limit, queues in order up to the queue size, and refuses beyond', async () => {
    const limiter = createWorkLimiter(2, 2);
    const signal = new AbortController().signal;
    const a = await limiter.acquire(signal);
    const b = await limiter.acquire(signal);
    expect(a && b).toBeTruthy();
    const order: string[] = [];
    const c = limiter.acquire(signal).then((free) => (order.push('c'), free));
    const d = limiter.acquire(signal).then((free) => (order.push('d'), free));
    expect(await limiter.acquire(signal)).toBeUndefined();
    expect({ running: limiter.running, waiting: limiter.waiting }).toEqual({ running: 2, waiting: 2 });
    a!();
    a!(); // freeing twice frees once
    const freeC = await c;
    expect(order).toEqual(['c']);
    expect({ running: limiter.running, waiting: limiter.waiting }).toEqual({ running: 2, waiting: 1 });
    b!();
    const freeD = await d;
    expect(order).toEqual(['c', 'd']);
    freeC!();
    freeD!();
    expect({ running: limiter.running, waiting: limiter.waiting }).toEqual({ running: 0, waiting: 0 });
  });

  it('drops a waiter whose client went away', async () => {
    const limiter = createWorkLimiter(1, 5);
    const free = await limiter.acquire(new AbortController().signal);
    const leaving = new AbortController();
    const waiting = limiter.acquire(leaving.signal);
    expect(limiter.waiting).toBe(1);
    leaving.abort();
    expect(await waiting).toBeUndefined();
    expect(limiter.waiting).toBe(0);
    free!();
    expect(limiter.running).toBe(0);
  });
});
