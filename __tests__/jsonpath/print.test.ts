import { compileTemplate } from '../../lib/jsonpath';
import { selectText } from './helpers';
import { quoteGo } from '../../lib/json-stream/go';
import { formatNumber } from '../../lib/jsonpath/print';

/** Text output: Go's number and JSON formatting, with integers printed in full. */

const print = (value: unknown): Promise<string> => selectText(compileTemplate('{.v}'), { v: value });

describe('numbers print as Go prints a float64, integers in full', () => {
  test.each([
    [0, '0'],
    [-0, '-0'],
    [42, '42'],
    [-7, '-7'],
    [1234567, '1234567'],
    [1e20, '100000000000000000000'],
    [Number.MAX_SAFE_INTEGER, '9007199254740991'],
    [1e21, '1e+21'],
    [2.5, '2.5'],
    [0.1, '0.1'],
    [123456.7, '123456.7'],
    [1234567.5, '1.2345675e+06'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [-0.000012345, '-1.2345e-05'],
    [1.5e300, '1.5e+300'],
    [5e-324, '5e-324'],
    [NaN, 'NaN'],
    [Infinity, '+Inf'],
    [-Infinity, '-Inf'],
  ])('%p prints as %s', async (value, expected) => {
    expect(formatNumber(value)).toBe(expected);
    // A selection sees the data as JSON.stringify serialises it, where a non-finite number is null.
    expect(await print(value)).toBe(Number.isFinite(value) ? expected : 'null');
  });

  test('bigints print in full, inside JSON too', async () => {
    expect(await print(12345678901234567890n)).toBe('12345678901234567890');
    expect(await print([1n, 2.5])).toBe('[1,2.5]');
  });

  test('numbers inside JSON print as Go marshals them', async () => {
    expect(await print([1, 1.5, 1234567, 1e21, 1e-7, 0.000001, NaN])).toBe('[1,1.5,1234567,1e+21,1e-7,0.000001,null]');
  });
});

describe('JSON is Go-compact: sorted keys, HTML-safe escapes', () => {
  test('keys are sorted by code point', async () => {
    expect(await print({ b: 1, a: 2, B: 3, é: 4, '\u{1F600}': 5, '\uFFFF': 6, 10: 7, 9: 8 })).toBe(
      '{"10":7,"9":8,"B":3,"a":2,"b":1,"é":4,"\uFFFF":6,"\u{1F600}":5}',
    );
  });

  test.each([
    ['<a href="x">&</a>', '"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"'],
    ['tab\there\nnew\r\b\f', '"tab\\there\\nnew\\r\\b\\f"'],
    ['\u0000\u0001\u001f\u007f', '"\\u0000\\u0001\\u001f\u007f"'],
    ['back\\slash', '"back\\\\slash"'],
    ['line\u2028para\u2029', '"line\\u2028para\\u2029"'],
    ['pair \u{1F600} lone \ud800 \udc00', '"pair \u{1F600} lone \\ufffd \\ufffd"'],
    ['plain', '"plain"'],
  ])('%j is quoted as Go quotes it', (text, quoted) => {
    expect(quoteGo(text)).toBe(quoted);
  });

  test('strings print raw on their own, escaped inside JSON', async () => {
    expect(await print('<b>&"')).toBe('<b>&"');
    expect(await print(['<b>'])).toBe('["\\u003cb\\u003e"]');
  });

  test('toJSON is honoured, as JSON.stringify does', async () => {
    // A Date is the string its toJSON() returns: printed bare like any string, quoted inside JSON.
    expect(await print(new Date(0))).toBe('1970-01-01T00:00:00.000Z');
    expect(await print({ when: new Date(0) })).toBe('{"when":"1970-01-01T00:00:00.000Z"}');
    expect(await selectText(compileTemplate('{.v.data[1]}'), { v: Buffer.from([7, 8]) })).toBe('8');
  });

  test('typed arrays are maps of their indices and maps have no keys, as JSON.stringify writes them', async () => {
    expect(await print(new Uint8Array([1, 2, 255]))).toBe(JSON.stringify(new Uint8Array([1, 2, 255])));
    expect(await print(new Float64Array([1, Number.NaN]))).toBe('{"0":1,"1":null}');
    expect(await selectText(compileTemplate('{.v.1}'), { v: new Uint8Array([1, 2, 3]) })).toBe('2');
    expect(await print(new Map([['a', 1]]))).toBe('{}');
  });

  test('empty containers and null', async () => {
    expect(await print({})).toBe('{}');
    expect(await print([])).toBe('[]');
    expect(await print(null)).toBe('null');
    expect(await print({ a: null, b: [null] })).toBe('{"a":null,"b":[null]}');
  });
});

describe('printing selections', () => {
  const data = { a: [1, 'two', true, null, { k: 'v' }, [3]] };

  test('values of one action are joined by a space, actions and text are kept as written', async () => {
    expect(await selectText(compileTemplate('{.a[*]}'), data)).toBe('1 two true null {"k":"v"} [3]');
    expect(await selectText(compileTemplate('<{.a[0]}|{.a[1]}>'), data)).toBe('<1|two>');
  });

  test('a string wildcard yields its UTF-8 bytes, as the Go engine does', async () => {
    expect(await selectText(compileTemplate('{.s.*}'), { s: 'aé' })).toBe('97 195 169');
  });

  test('literals print themselves', async () => {
    expect(await selectText(compileTemplate('{"a\\tb"}{1}{-2}{1.50}{true}{"\\u00e9\\x41\\101"}'), null)).toBe('a\tb1-21.5trueéAA');
    expect(await selectText(compileTemplate('{9223372036854775807}'), null)).toBe('9223372036854775807');
    expect(await selectText(compileTemplate('{9223372036854775808}'), null)).toBe('9223372036854776000');
  });
});
