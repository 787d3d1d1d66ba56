import { goJsonPieces, JsonSerializationError } from '../../lib/json-stream';
import { cooperativeTicker } from '../../lib/util/cooperative';

/** Go's dialect of the one serializer: what kubectl's text output prints for objects and arrays. */

async function go(value: unknown, maxBytes = Infinity): Promise<{ text: string; bytes: number } | undefined> {
  const result = await goJsonPieces(value, { maxBytes, tick: cooperativeTicker(undefined, 1) });
  return result && { text: result.pieces.join(''), bytes: result.bytes };
}

describe('goJsonPieces', () => {
  it('sorts keys by code point, escapes as Go does and writes a BigInt as its digits', async () => {
    const text = '{"a":{"10":3,"9":4,"\uFFFF":2,"\u{1F600}":1},"b":[1,-0,"x\\u003cy\\u003e\\u0026"]}';
    expect(await go({ b: [1n, -0, 'x<y>&'], a: { '\u{1F600}': 1, '\uFFFF': 2, 10: 3, 9: 4 }, c: undefined })).toEqual({
      text,
      bytes: Buffer.byteLength(text),
    });
  });

  it('writes own keys named like Object.prototype members, __proto__ included, sorted as any other', async () => {
    const value = JSON.parse('{"valueOf": 1, "__proto__": {"constructor": 2}, "toString": 3}') as object;
    expect((await go(value))?.text).toBe('{"__proto__":{"constructor":2},"toString":3,"valueOf":1}');
  });

  it('writes what JSON.stringify would see: toJSON, getters, boxed primitives', async () => {
    const withGetter = Object.defineProperty({}, 'g', { enumerable: true, get: () => 'read' });
    expect((await go([new Date(0), withGetter, new Number(3), new String('s')]))?.text).toBe(
      '["1970-01-01T00:00:00.000Z",{"g":"read"},3,"s"]',
    );
  });

  it('counts UTF-8 bytes and gives up past maxBytes', async () => {
    expect(await go(['é'])).toEqual({ text: '["é"]', bytes: 6 });
    const large = Array.from({ length: 100_000 }, (_, i) => ({ i }));
    expect(await go(large, 1000)).toBeUndefined();
  });

  it('refuses a cycle with the serializer error every answer gets', async () => {
    const a: Record<string, unknown> = {};
    a.self = [a];
    await expect(go(a)).rejects.toMatchObject({ constructor: JsonSerializationError, reason: 'cycle' });
  });
});
