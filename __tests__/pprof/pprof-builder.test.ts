import { fileURLToPath } from 'node:url';
import { Profile } from 'pprof-format';
import { PprofBuilder, encodeProfile, fileNameOf, locationAddress } from '../../lib/pprof/pprof-builder';
import { functionNames, sampleTypes, stringAt } from './helpers';

/** A profile big enough to be encoded in many parts (samples, locations and functions alike). */
function bigProfile(): Profile {
  const builder = new PprofBuilder();
  const samples = [];
  for (let i = 0; i < 1000; i += 1) {
    const stack = [
      builder.location(`leaf${i}`, '/srv/app.js', i + 1),
      builder.location(`caller${i % 7}`, '/srv/lib.js', 3),
      builder.location('main'),
    ];
    samples.push({
      locationIds: stack,
      values: [i + 1, (i + 1) * 1000],
      numLabels: i % 100 === 0 ? [{ key: 'bytes', num: i, unit: 'bytes' }] : [],
    });
  }
  return builder.build({
    sampleTypes: [
      { type: 'samples', unit: 'count' },
      { type: 'cpu', unit: 'nanoseconds' },
    ],
    samples,
    periodType: { type: 'cpu', unit: 'nanoseconds' },
    period: 10_000_000,
    timeMs: 1_700_000_000_000,
    durationNanos: 30e9,
    comments: ['one comment'],
  });
}

describe('encodeProfile', () => {
  it('writes exactly the bytes of a one-piece encode, although it encodes in parts', async () => {
    const profile = bigProfile();
    expect(Buffer.from(await encodeProfile(profile)).equals(Buffer.from(profile.encode()))).toBe(true);
  });

  it('round-trips every field a client reads', async () => {
    const decoded = Profile.decode(await encodeProfile(bigProfile()));
    expect(sampleTypes(decoded)).toEqual(['samples/count', 'cpu/nanoseconds']);
    expect(decoded.sample).toHaveLength(1000);
    expect(decoded.location).toHaveLength(1008);
    expect(functionNames(decoded)).toContain('leaf999');
    expect(Number(decoded.period)).toBe(10_000_000);
    expect(Number(decoded.durationNanos)).toBe(30e9);
    expect(decoded.comment.map((c) => stringAt(decoded, c))).toEqual(['one comment']);
    expect(decoded.sample[999].value.map(Number)).toEqual([1000, 1_000_000]);
    expect(decoded.sample.filter((s) => s.label.length > 0)).toHaveLength(10);
  });

  it('encodes an empty profile', async () => {
    const empty = new PprofBuilder().build({ sampleTypes: [{ type: 'contentions', unit: 'count' }], samples: [] });
    expect(Buffer.from(await encodeProfile(empty)).equals(Buffer.from(empty.encode()))).toBe(true);
  });
});

describe('fileNameOf', () => {
  // It runs in the browser too, so it cannot call node:url; Node's fileURLToPath is the reference.
  it.each([
    'file:///srv/app/dist/main.js',
    'file:///srv/my%20app/caf%C3%A9.js',
    'file://localhost/srv/app.js',
    'file:///srv/a%23b%3Fc.js',
    'file:///srv/./x/../app.js',
  ])('decodes %s as fileURLToPath does', (url) => {
    expect(fileNameOf(url)).toBe(fileURLToPath(url));
  });

  it.each(['file://remote-host/srv/app.js', 'file:///srv/a%2Fb.js', 'file:///srv/%E0%A4%A.js'])(
    'keeps %s, which fileURLToPath refuses',
    (url) => {
      expect(() => fileURLToPath(url)).toThrow();
      expect(fileNameOf(url)).toBe(url);
    },
  );

  it('leaves other URLs as they are, and gives a Windows path for a drive letter', () => {
    expect(fileNameOf('node:internal/timers')).toBe('node:internal/timers');
    expect(fileNameOf('https://example.test/app.js')).toBe('https://example.test/app.js');
    expect(fileNameOf('')).toBe('');
    expect(fileNameOf('file:///C:/app/main.js')).toBe('C:\\app\\main.js');
  });
});

describe('location addresses', () => {
  // Grafana Alloy identifies a sample by its locations' addresses when it merges samples and takes
  // differences of cumulative profiles: all 0, every stack of one depth would be one sample.
  const frame = (functionName: string, lineNumber: number, columnNumber = 4) => ({
    functionName,
    scriptId: '7',
    url: 'file:///srv/app.js',
    lineNumber,
    columnNumber,
  });

  it('are non-zero, distinct per location, and the same in every profile', () => {
    const addressesOf = (): number[] => {
      const builder = new PprofBuilder();
      const ids = [
        builder.frameLocation(frame('render', 10)),
        builder.frameLocation(frame('render', 10), 12),
        builder.frameLocation(frame('render', 10, 5)),
        builder.frameLocation(frame('parse', 10)),
        builder.location('(event loop delay)'),
      ];
      const profile = Profile.decode(builder.build({ sampleTypes: [{ type: 'x', unit: 'count' }], samples: [] }).encode());
      return ids.map((id) => Number(profile.location.find((l) => Number(l.id) === id)!.address));
    };
    const first = addressesOf();
    expect(first.every((a) => Number.isSafeInteger(a) && a > 0)).toBe(true);
    expect(new Set(first).size).toBe(first.length);
    expect(addressesOf()).toEqual(first);
  });

  it('spread over 53 bits without a collision among 100 000 locations', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 100_000; i++) seen.add(locationAddress(`fn${i}\u0000/srv/app.js\u0000${i % 977}\u00007:${i % 13}\u0000${i % 977}`));
    expect(seen.size).toBe(100_000);
    expect(Math.max(...seen)).toBeGreaterThan(2 ** 50);
    expect(Math.max(...seen)).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
  });
});
