import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { PprofBuilder } from '../../lib/pprof/pprof-builder';
import { encodePprof } from '../../lib/pprof/pprof-encoder';
import { decodePprof, functionNames } from './helpers';

function profileOf(samples: number): Profile {
  const builder = new PprofBuilder();
  return builder.build({
    sampleTypes: [{ type: 'samples', unit: 'count' }],
    samples: Array.from({ length: samples }, (_, i) => ({
      locationIds: [builder.location(`f${i}`, '/srv/app.js', i + 1)],
      values: [i + 1],
    })),
  });
}

describe('encodePprof', () => {
  it('gzips exactly the bytes of a one-piece encode, as go tool pprof reads them', async () => {
    const profile = profileOf(1000);
    const gzipped = await encodePprof(profile);
    expect(gzipped.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    expect(gunzipSync(gzipped).equals(Buffer.from(profile.encode()))).toBe(true);
    expect(functionNames(decodePprof(gzipped))).toContain('f999');
  });

  it('encodes an empty profile', async () => {
    const empty = profileOf(0);
    expect(gunzipSync(await encodePprof(empty)).equals(Buffer.from(empty.encode()))).toBe(true);
  });
});
