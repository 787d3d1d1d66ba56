import { setImmediate as nextTurn } from 'node:timers/promises';

/** Characters measured per turn of the event loop: about a millisecond of work. */
const SLICE_CHARS = 1 << 20;

/**
 * The UTF-8 byte length of `text`, measured in slices that yield to the event loop between them,
 * so the size of a 15 MB rendered configuration never costs the host one long stall. Slices never
 * split a surrogate pair (that would count one 4-byte character as two 3-byte replacements).
 */
export async function utf8ByteLength(text: string): Promise<number> {
  if (text.length <= SLICE_CHARS) return Buffer.byteLength(text);
  let total = 0;
  for (let start = 0; start < text.length;) {
    let end = Math.min(text.length, start + SLICE_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    total += Buffer.byteLength(text.slice(start, end));
    start = end;
    if (start < text.length) await nextTurn();
  }
  return total;
}
