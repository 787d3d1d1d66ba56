/**
 * A scrape abandoned (timed out) while a collect() never settles never reaches the renderer's own
 * abort path: its gzip stream must still be released, or each such scrape leaves one behind for as
 * long as the host's promise lives.
 */
import type { Gzip, ZlibOptions } from 'node:zlib';
import { Gauge, Registry } from 'prom-client';
import { renderExposition } from '../../../lib/metrics/exposition';

const mockStreams: Gzip[] = [];
jest.mock('node:zlib', () => {
  const actual = jest.requireActual<typeof import('node:zlib')>('node:zlib');
  return {
    ...actual,
    createGzip: (options?: ZlibOptions): Gzip => {
      const stream = actual.createGzip(options);
      mockStreams.push(stream);
      return stream;
    },
  };
});

it('releases its gzip stream once abandoned, while the collect() that holds it never settles', async () => {
  const registry = new Registry();
  new Gauge({
    name: 'hung',
    help: 'collect() that never settles',
    registers: [registry],
    collect: () => new Promise<void>(() => undefined),
  });
  const abandoned = new AbortController();
  void renderExposition(registry, { compress: true, signal: abandoned.signal }).catch(() => undefined);
  await new Promise((resolve) => setImmediate(resolve));
  expect(mockStreams).toHaveLength(1);
  expect(mockStreams[0]!.destroyed).toBe(false);
  abandoned.abort(new Error('scrape timed out'));
  expect(mockStreams[0]!.destroyed).toBe(true);
});
