import { utf8ByteLength } from '../../lib/state/byte-length';

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

  it('yields to the event loop while measuring large text', async () => {
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    await utf8ByteLength('x'.repeat(8 << 20));
    clearInterval(timer);
    expect(turns).toBeGreaterThan(0);
  });
});
