import { performance } from 'node:perf_hooks';
import { utf8ByteLength } from '../../lib/state/byte-length';
import { startOfRun } from '../../lib/util/cooperative';

describe('utf8ByteLength', () => {
  it('equals Buffer.byteLength for small and large text, mixed scripts included', async () => {
    for (const text of ['', 'ascii', 'héllo', '日本語', '🙂'.repeat(10)]) expect(await utf8ByteLength(text)).toBe(Buffer.byteLength(text));
    const large = 'global\n  maxconn 2000 é 日本 🙂\n'.repeat(120_000);
    expect(large.length).toBeGreaterThan(1 << 21);
    expect(await utf8ByteLength(large)).toBe(Buffer.byteLength(large));
  });

  it('never splits a surrogate pair at a slice boundary', async () => {
    // The emoji's high surrogate sits exactly at the end of the first 1 Mi-character slice.
    const text = `${'a'.repeat((1 << 20) - 1)}🙂${'b'.repeat(1 << 20)}`;
    expect(text.charCodeAt((1 << 20) - 1)).toBeGreaterThanOrEqual(0xd800);
    expect(await utf8ByteLength(text)).toBe(Buffer.byteLength(text));
  });

  it('yields to the event loop once the run has used its budget', async () => {
    // Counting setImmediate turns, and spending the budget before the call, makes this independent
    // of how fast the machine measures: on Node 26, 8 MiB of ASCII took less than the 5 ms budget,
    // so a test that relied on the measuring itself being slow saw no turn.
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const text = 'x'.repeat(8 << 20);
    const runStart = startOfRun();
    while (performance.now() - runStart < 6) {
      // the synchronous run this call belongs to has already lasted past the 5 ms budget
    }
    const bytes = await utf8ByteLength(text);
    ticking = false;
    expect(bytes).toBe(text.length);
    expect(turns).toBeGreaterThan(0);
  });

  it('answers within the same run when the text is short', async () => {
    let turns = 0;
    setImmediate(() => turns++);
    expect(await utf8ByteLength('héllo')).toBe(6);
    expect(turns).toBe(0);
  });
});
