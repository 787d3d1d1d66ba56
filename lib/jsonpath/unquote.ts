/**
 * Go's `strconv.Unquote` rules extended to single-quoted strings, as the reference engine reads
 * quoted text in a template. Escapes may produce raw bytes (`\xff`, `\377`), so the result is
 * assembled as UTF-8 bytes and decoded once; bytes that do not form UTF-8 become U+FFFD.
 */

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = {
  a: 0x07,
  b: 0x08,
  f: 0x0c,
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
  v: 0x0b,
  '\\': 0x5c,
};

const decoder = new TextDecoder('utf-8');

function pushCodePoint(bytes: number[], cp: number): void {
  if (cp < 0x80) bytes.push(cp);
  else if (cp < 0x800) bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
  else if (cp < 0x10000) bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  else bytes.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
}

function hexDigits(text: string, from: number, count: number): number | undefined {
  if (from + count > text.length) return undefined;
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const digit = parseInt(text[i], 16);
    if (Number.isNaN(digit)) return undefined;
    value = value * 16 + digit;
  }
  return value;
}

/**
 * Unquotes `quoted` (quotes included). Returns `undefined` where Go answers `invalid syntax`.
 */
export function unquoteExtend(quoted: string): string | undefined {
  const n = quoted.length;
  if (n < 2) return undefined;
  const quote = quoted[0];
  if (quote !== quoted[n - 1] || (quote !== '"' && quote !== "'")) return undefined;
  const body = quoted.slice(1, n - 1);
  if (!body.includes('\\') && !body.includes(quote)) return body;

  const bytes: number[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body[i];
    if (c === quote) return undefined;
    if (c !== '\\') {
      const cp = body.codePointAt(i) as number;
      const isLoneSurrogate = cp >= 0xd800 && cp <= 0xdfff;
      pushCodePoint(bytes, isLoneSurrogate ? 0xfffd : cp);
      i += cp > 0xffff ? 2 : 1;
      continue;
    }
    if (i + 1 >= body.length) return undefined;
    const e = body[i + 1];
    i += 2;
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      bytes.push(simple);
      continue;
    }
    switch (e) {
      case 'x': {
        const v = hexDigits(body, i, 2);
        if (v === undefined) return undefined;
        bytes.push(v);
        i += 2;
        break;
      }
      case 'u':
      case 'U': {
        const width = e === 'u' ? 4 : 8;
        const v = hexDigits(body, i, width);
        if (v === undefined || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return undefined;
        pushCodePoint(bytes, v);
        i += width;
        break;
      }
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7': {
        const rest = body.slice(i, i + 2);
        if (!/^[0-7]{2}$/.test(rest)) return undefined;
        const v = parseInt(e + rest, 8);
        if (v > 255) return undefined;
        bytes.push(v);
        i += 2;
        break;
      }
      case "'":
      case '"':
        if (e !== quote) return undefined;
        bytes.push(e.charCodeAt(0));
        break;
      default:
        return undefined;
    }
  }
  return decoder.decode(Uint8Array.from(bytes));
}
