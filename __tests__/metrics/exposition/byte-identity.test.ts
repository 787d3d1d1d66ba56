/**
 * The text format is prom-client's, byte for byte: every corpus registry and a few hundred seeded
 * random ones are rendered by prom-client's `registry.metrics()` and by our renderer (each on a
 * registry of its own, built the same way) and must give the same bytes. A failure names the case
 * or seed; replay it with `randomCase(seed)`.
 */
import { Gauge, Registry, type OpenMetricsContentType } from 'prom-client';
import { renderExposition, renderExpositionText } from '../../../lib/metrics/exposition';
import { CORPUS, randomCase, type Build } from './corpus';

async function ours(build: Build): Promise<Buffer> {
  const registry = new Registry();
  build(registry);
  const { body } = await renderExposition(registry, { format: 'text', compress: false });
  return Buffer.concat(body.chunks);
}

async function promClient(build: Build): Promise<Buffer> {
  const registry = new Registry();
  build(registry);
  return Buffer.from(await registry.metrics(), 'utf8');
}

/** Compares as text for a readable diff, and as bytes (lone surrogates become U+FFFD alike on the wire). */
async function expectIdentical(build: Build, label: string): Promise<void> {
  const [expected, actual] = await Promise.all([promClient(build), ours(build)]);
  expect({ label, text: actual.toString('utf8') }).toEqual({ label, text: expected.toString('utf8') });
  expect(actual.equals(expected)).toBe(true);
}

describe('text format 0.0.4 is byte-identical to prom-client', () => {
  it.each(CORPUS.map((c) => [c.name, c.build] as const))('%s', async (label, build) => {
    await expectIdentical(build, label);
  });

  it('on 300 seeded random registries', async () => {
    for (let seed = 1; seed <= 300; seed += 1) {
      const { name, build } = randomCase(seed);
      await expectIdentical(build, name);
    }
  });

  it('reads a registry created for OpenMetrics as text too, without touching it', async () => {
    const build: Build = (registry) => {
      new Gauge({ name: 'om_gauge', help: 'g', labelNames: ['a'], registers: [registry] }).set({ a: 'x' }, 1);
    };
    const om = new Registry<OpenMetricsContentType>();
    om.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    build(om);
    const text = await renderExpositionText(om, 'text');
    expect(text).toBe((await promClient(build)).toString('utf8'));
    expect(om.contentType).toBe(Registry.OPENMETRICS_CONTENT_TYPE);
  });
});

describe('failing and hanging collect() callbacks fail as prom-client fails', () => {
  const failing = (collect: () => void | Promise<void>): Build => {
    return (registry) => {
      new Gauge({ name: 'before', help: 'b', registers: [registry] }).set(1);
      new Gauge({ name: 'failing', help: 'f', registers: [registry], collect });
    };
  };

  it.each([
    [
      'throws',
      () => {
        throw new Error('collect threw');
      },
    ],
    ['rejects', () => Promise.reject(new Error('collect rejected'))],
  ])('a collect() that %s rejects the rendering with its error', async (_label, collect) => {
    const build = failing(collect);
    const expected = await promClient(build).catch((err: unknown) => err);
    const actual = await ours(build).catch((err: unknown) => err);
    expect(expected).toBeInstanceOf(Error);
    expect(actual).toEqual(expected);
  });

  it('a collect() that never settles leaves the rendering pending, for the router to time out', async () => {
    const build = failing(() => new Promise<void>(() => undefined));
    const pending = Symbol('pending');
    const within = <T>(promise: Promise<T>) =>
      Promise.race([promise, new Promise<symbol>((resolve) => setTimeout(() => resolve(pending), 50))]);
    expect(await within(promClient(build))).toBe(pending);
    expect(await within(ours(build))).toBe(pending);
  });

  it('calls every collect() even when an earlier one throws, as prom-client does', async () => {
    const called: string[] = [];
    const build: Build = (registry) => {
      new Gauge({
        name: 'first',
        help: 'f',
        registers: [registry],
        collect() {
          called.push('first');
          throw new Error('first failed');
        },
      });
      new Gauge({ name: 'second', help: 's', registers: [registry], collect: () => void called.push('second') });
    };
    await expect(promClient(build)).rejects.toThrow('first failed');
    expect(called).toEqual(['first', 'second']);
    called.length = 0;
    await expect(ours(build)).rejects.toThrow('first failed');
    expect(called).toEqual(['first', 'second']);
  });
});
