import { cooperativeTicker } from '../util/cooperative';

/** Characters measured per step: well under a millisecond of work. */
const STEP_CHARS = 1 << 18;

/**
 * The UTF-8 byte length of `text`, measured in steps that let the event loop in between, so the
 * size of a 15 MB rendered configuration never costs the host one long stall. Steps never split a
 * surrogate pair (that would count one 4-byte character as two 3-byte replacements).
 */
export async function utf8ByteLength(text: string): Promise<number> {
  if (text.length <= STEP_CHARS) return Buffer.byteLength(text);
  const tick = cooperativeTicker(5, 1);
  let total = 0;
  for (let start = 0; start < text.length;) {
    let end = Math.min(text.length, start + STEP_CHARS);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    total += Buffer.byteLength(text.slice(start, end));
    start = end;
    await tick();
  }
  return total;
}
