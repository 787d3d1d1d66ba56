import express from 'express';
import { SizeHints, sendJson } from '../../lib/http/send-json';
import { serializeAtOnce } from '../../lib/json-stream/index';
import { closeAllListening, listen, request } from '../helpers/http';

afterAll(closeAllListening);

/** An app answering `/json?n=<elements>` with an array of that many small objects. */
async function app(hints: SizeHints | undefined): Promise<string> {
  const server = express();
  server.get('/json', (req, res, next) => {
    const n = Number(req.query['n']);
    const value = Array.from({ length: n }, (_, i) => ({ id: i, name: `item-${i}` }));
    sendJson(req, res, value, { atOnceBudgetMs: 10, sizeHints: hints }).catch(next);
  });
  return (await listen(server)).origin;
}

describe('sendJson', () => {
  it('sends a cheap body at once with its length, and streams a costly one', async () => {
    const origin = await app(undefined);
    const small = await request(`${origin}/json?n=10`);
    expect(small.headers['content-length']).toBe(String(small.body.length));
    expect(small.json<unknown[]>()).toHaveLength(10);
    // Two million elements cannot be written within 10 ms on any machine.
    const large = await request(`${origin}/json?n=2000000`, { timeoutMs: 60_000 });
    expect(large.headers['content-length']).toBeUndefined();
    expect(large.headers['transfer-encoding']).toBe('chunked');
    expect(large.json<unknown[]>()).toHaveLength(2_000_000);
  });

  it('streams without walking first where the same URL answered a large body, and learns when it shrinks', async () => {
    const hints = new SizeHints();
    const origin = await app(hints);
    hints.set('/json?n=10', 500_000_000);
    const first = await request(`${origin}/json?n=10`);
    expect(first.headers['transfer-encoding']).toBe('chunked');
    expect(hints.get('/json?n=10')).toBe(first.body.length);
    const second = await request(`${origin}/json?n=10`);
    expect(second.headers['content-length']).toBe(String(second.body.length));
    expect(second.text).toBe(first.text);
  });
});

describe('SizeHints', () => {
  it('remembers lengths by URL, forgets the oldest beyond its capacity, and ignores very long URLs', () => {
    const hints = new SizeHints(2);
    hints.set('/a', 1);
    hints.set('/b', 2);
    hints.set('/a', 3);
    hints.set('/c', 4);
    expect([hints.get('/a'), hints.get('/b'), hints.get('/c')]).toEqual([3, undefined, 4]); // /b was the oldest once /a was answered again
    hints.set(`/${'x'.repeat(5000)}`, 5);
    expect(hints.get(`/${'x'.repeat(5000)}`)).toBeUndefined();
    expect(hints.get('/a')).toBe(3);
  });
});

describe('serializeAtOnce with an expected length', () => {
  it('does not walk a value expected to be over the budget, and still walks one expected to fit', () => {
    let reads = 0;
    const value = new Proxy([1, 2, 3], {
      get(target, property, receiver) {
        reads++;
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    expect(serializeAtOnce(value, { budgetMs: 10, expectedBytes: 1e12 })).toBeUndefined();
    expect(reads).toBe(0);
    expect(serializeAtOnce(value, { budgetMs: 10, expectedBytes: 7 })?.body.toString()).toBe('[1,2,3]');
    expect(reads).toBeGreaterThan(0);
    expect(() => serializeAtOnce(value, { budgetMs: 10, expectedBytes: -1 })).toThrow(/expectedBytes must be a number >= 0/);
  });
});
