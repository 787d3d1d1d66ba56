import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { PprofBuilder, encodePprof } from '../../lib/pprof/pprof-builder';
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

describe('encodePprof', () => {
  it('writes exactly the bytes of a one-piece encode, although it encodes in parts', async () => {
    const profile = bigProfile();
    const gzipped = await encodePprof(profile);
    expect(gzipped.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(gunzipSync(gzipped).equals(Buffer.from(profile.encode()))).toBe(true);
  });

  it('round-trips every field a client reads', async () => {
    const decoded = Profile.decode(gunzipSync(await encodePprof(bigProfile())));
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
    expect(gunzipSync(await encodePprof(empty)).equals(Buffer.from(empty.encode()))).toBe(true);
  });
});
