/*
 * Go's JSON dialect, as `encoding/json` writes it and kubectl prints it: object keys sorted by
 * their UTF-8 bytes (code point order), and strings escaped HTML-safe (`<` `>` `&` U+2028 U+2029
 * as `\u` escapes) with a lone surrogate written as U+FFFD, as Go writes invalid UTF-8.
 */

const SURROGATE = /[\uD800-\uDFFF]/;

/** Orders two strings by code point, Go's byte-wise order (UTF-16 order differs only where surrogates meet U+E000–U+FFFF). */
export function compareCodePoints(a: string, b: string): number {
  // Without surrogates, UTF-16 order is code point order: the engine's own comparison, at native speed.
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

const HIGH_UNITS = /[\ud800-\uffff]/;

/** Sorts `keys` in place into Go's order; the native sort agrees unless a key has a character from U+D800 up. */
export function sortKeysGo(keys: string[]): string[] {
  if (keys.length < 2) return keys;
  keys.sort();
  for (const key of keys) {
    if (HIGH_UNITS.test(key)) return keys.sort(compareCodePoints);
  }
  return keys;
}

// Characters Go's encoder escapes, plus surrogates (checked for pairing on the slow path).
const NEEDS_ESCAPE = /["\\\u0000-\u001f<>&\u2028\u2029\ud800-\udfff]/;

const SHORT_ESCAPES: Readonly<Record<number, string>> = {
  0x22: '\\"',
  0x5c: '\\\\',
  0x08: '\\b',
  0x0c: '\\f',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
};

function unicodeEscape(code: number): string {
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

/** The inside of a JSON string literal (without its quotes) as Go's encoder writes it. */
export function escapeGo(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return text;
  let out = '';
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    let replacement: string | undefined;
    if (code >= 0xd800 && code <= 0xdbff) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        i++;
        continue;
      }
      replacement = '\\ufffd';
    } else if (code >= 0xdc00 && code <= 0xdfff) {
      replacement = '\\ufffd';
    } else if (code < 0x20 || code === 0x22 || code === 0x5c) {
      replacement = SHORT_ESCAPES[code] ?? unicodeEscape(code);
    } else if (code === 0x3c || code === 0x3e || code === 0x26 || code === 0x2028 || code === 0x2029) {
      replacement = unicodeEscape(code);
    }
    if (replacement !== undefined) {
      out += text.slice(run, i) + replacement;
      run = i + 1;
    }
  }
  return out + text.slice(run);
}

/** A JSON string literal as Go's encoder writes it. */
export function quoteGo(text: string): string {
  return `"${escapeGo(text)}"`;
}
