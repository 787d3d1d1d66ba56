import { jsonPathStatus } from '../../lib/introspection/errors';
import * as fs from 'fs';
import * as path from 'path';
import { JsonPathError, compileTemplate, execute, selectJsonSliced } from '../../lib/jsonpath';
import { selectText } from './helpers';

/** The engine reads only the data's own keys, never writes to it, and never evaluates template text as code. */

async function status(run: () => unknown): Promise<number | 'ok'> {
  try {
    await run();
    return 'ok';
  } catch (err) {
    if (err instanceof JsonPathError) return jsonPathStatus(err.kind);
    throw err;
  }
}

describe('only own enumerable keys are visible', () => {
  test.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'])(
    '{.%s} on {} is not found',
    async (key) => {
      const template = compileTemplate(`{.${key}}`);
      expect(await status(() => selectJsonSliced(template, {}))).toBe(404);
      expect(await selectText(template, {})).toBe('');
      expect(await status(() => selectJsonSliced(compileTemplate(`{.a.${key}}`), { a: { b: 1 } }))).toBe(404);
    },
  );

  test('length is not a key of arrays or strings', async () => {
    expect(await status(() => selectJsonSliced(compileTemplate('{.list.length}'), { list: [1, 2] }))).toBe(404);
    expect(await status(() => selectJsonSliced(compileTemplate('{.name.length}'), { name: 'abc' }))).toBe(404);
  });

  test('keys the data itself holds are found, whatever their name', async () => {
    const data = JSON.parse('{"__proto__": {"x": 1}, "constructor": "c", "toString": 5}') as object;
    expect(await selectJsonSliced(compileTemplate('{.__proto__.x}'), data)).toEqual({ kind: 'value', value: 1 });
    expect(await selectText(compileTemplate('{.constructor} {.toString}'), data)).toBe('c 5');
    expect(await selectText(compileTemplate('{.*}'), data)).toBe('{"x":1} c 5');
  });

  test('objects without a prototype work', async () => {
    const data = Object.assign(Object.create(null) as object, { a: Object.assign(Object.create(null) as object, { b: 2 }) });
    expect(await selectJsonSliced(compileTemplate('{.a.b}'), data)).toEqual({ kind: 'value', value: 2 });
    expect(await selectText(compileTemplate('{..b}'), data)).toBe('2');
    expect(await selectText(compileTemplate('{}'), data)).toBe('{"a":{"b":2}}');
  });

  test('class instances show their own fields only, as JSON.stringify does', async () => {
    class Thing {
      name = 'thing';
      method(): string {
        return 'nope';
      }
      get computed(): string {
        return 'nope';
      }
    }
    const data = { thing: new Thing() };
    expect(await selectText(compileTemplate('{.thing.*}'), data)).toBe('thing');
    expect(await selectText(compileTemplate('{.thing}'), data)).toBe('{"name":"thing"}');
    expect(await status(() => selectJsonSliced(compileTemplate('{.thing.method}'), data))).toBe(404);
    expect(await status(() => selectJsonSliced(compileTemplate('{.thing.computed}'), data))).toBe(404);
  });

  test('non-enumerable keys, undefined values and functions are absent; own getters are read', async () => {
    const data: Record<string, unknown> = { u: undefined, f: () => 1, list: [undefined, () => 1, 2] };
    Object.defineProperty(data, 'hidden', { value: 1, enumerable: false });
    Object.defineProperty(data, 'computed', { get: () => 'yes', enumerable: true });
    for (const key of ['hidden', 'u', 'f']) expect(await status(() => selectJsonSliced(compileTemplate(`{.${key}}`), data))).toBe(404);
    expect(await selectJsonSliced(compileTemplate('{.computed}'), data)).toEqual({ kind: 'value', value: 'yes' });
    expect(await selectText(compileTemplate('{.list}'), data)).toBe('[null,null,2]');
    expect(await selectJsonSliced(compileTemplate('{.list[*]}'), data)).toEqual({ kind: 'value', value: [null, null, 2] });
    expect(await selectText(compileTemplate('{}'), data)).toBe('{"computed":"yes","list":[null,null,2]}');
  });
});

describe('nothing is written', () => {
  const templates = [
    '{.__proto__}',
    '{.__proto__.polluted}',
    "{['__proto__']}",
    '{.constructor.prototype}',
    '{..}',
    '{.*}',
    '{range .list[*]}{@.__proto__}{end}',
    '{.list[?(@.__proto__)]}',
    '{.list[?(@.constructor=="x")]}',
    "{.list[*]['__proto__','constructor']}",
    '{.list[0:2]}',
  ];

  test('frozen data evaluates, and the data and Object.prototype are unchanged', async () => {
    const source = { list: [{ a: 1 }, { b: [2, 3] }], name: 'x' };
    const snapshot = JSON.stringify(source);
    const data = structuredClone(source);
    const freeze = (value: unknown): void => {
      if (typeof value === 'object' && value !== null) {
        Object.freeze(value);
        Object.values(value).forEach(freeze);
      }
    };
    freeze(data);
    const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
    for (const template of templates) {
      for (const allowMissingKeys of [true, false]) {
        try {
          await execute(compileTemplate(template), data, { allowMissingKeys });
        } catch (err) {
          expect(err).toBeInstanceOf(JsonPathError);
        }
      }
    }
    expect(JSON.stringify(data)).toBe(snapshot);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('template text is never evaluated as code', () => {
  test('no eval, Function or static-eval anywhere in the engine', () => {
    const dir = path.join(__dirname, '..', '..', 'lib', 'jsonpath');
    for (const file of fs.readdirSync(dir)) {
      const code = fs.readFileSync(path.join(dir, file), 'utf8');
      expect({
        file,
        hits: code.match(/\beval\s*\(|new\s+Function\b|\bFunction\s*\(|static-eval|require\s*\(\s*['"]jsonpath['"]/g),
      }).toEqual({
        file,
        hits: null,
      });
    }
  });

  test('code-looking filters are just comparisons', async () => {
    const data = { list: [{ a: 'process.exit(1)' }, { a: 'x' }] };
    expect(await selectText(compileTemplate('{.list[?(@.a=="process.exit(1)")].a}'), data)).toBe('process.exit(1)');
    expect(await status(() => compileTemplate('{.list[?(@.a==process.exit(1))]}'))).toBe(400);
  });
});
