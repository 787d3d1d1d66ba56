import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Profile } from 'pprof-format';
import { cooperativeTicker, nextTurn } from '../util/cooperative';
import { encodeProfile } from './pprof-builder';
import { heapProfileToPprof } from './heap/to-pprof';
import type { V8CallFrame, V8SamplingHeapProfile } from './v8-shapes';

// Node only: the bytes on the wire. The builder and converters stay platform-neutral, because the
// debug console's page runs them in a browser (and gzips with the browser's CompressionStream).

const gzipAsync = promisify(gzip);

/**
 * Encodes and gzips, as `go tool pprof` expects on the wire. Encoding yields every few
 * milliseconds and gzip runs on the libuv pool, so a large profile does not stall the host.
 * Aborting `signal` (the client went away) stops it before the next slice or the gzip, rejecting
 * with the reason.
 */
export async function encodePprof(profile: Profile, signal?: AbortSignal): Promise<Buffer> {
  const encoded = await encodeProfile(profile, signal);
  // Starting a gzip takes milliseconds of its own the first times (zlib's state, cold code): if
  // encoding has used the slice, the gzip starts on the next turn.
  const pause = cooperativeTicker(5, 1, signal)();
  if (pause) await pause;
  signal?.throwIfAborted();
  return gzipAsync(encoded);
}

/**
 * Converts and encodes a two-frame heap profile once, on a later turn than the caller's: the first
 * real `/heap` request would otherwise pay for compiling the conversion, the protobuf encoder and
 * zlib's set-up in its own stall (15-23 ms measured with an 85 MB heap, against 5-9 ms warm).
 */
export function warmHeapConversion(): void {
  setImmediate(() => {
    const frame: V8CallFrame = { functionName: 'warm', scriptId: '0', url: '', lineNumber: 0, columnNumber: 0 };
    const profile: V8SamplingHeapProfile = {
      head: {
        callFrame: { ...frame, functionName: '(root)' },
        selfSize: 0,
        children: [{ callFrame: frame, selfSize: 1024, children: [] }],
      },
    };
    // Each stage on its own turn: cold, each costs the host a few milliseconds (zlib's first gzip
    // alone about 2), and together they made one 5-9 ms stall right after start-up.
    heapProfileToPprof(profile, 512 * 1024)
      .then(async (pprof) => {
        await nextTurn();
        return encodePprof(pprof);
      })
      .catch(() => undefined);
  });
}
