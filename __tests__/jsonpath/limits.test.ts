import { jsonPathStatus } from '../../lib/introspection/errors';
import { DEFAULT_JSONPATH_LIMITS, JsonPathError, compileTemplate, execute, selectTextSliced, selectJsonSliced } from '../../lib/jsonpath';
import { prng } from '../helpers/prng';
import { describeParseTree } from './describe';
import { failure, selectText } from './helpers';

/**
 * Hostile or careless templates and data end in a clean JsonPathError, never a hang, a stack
 * overflow or a walk over data the template does not name.
 */

const roomy = { maxTemplateLength: 1_000_000, maxNodes: 1_000_000 };

describe('template size and nesting', () => {
  test('a template over maxTemplateLength is 413 before any parsing', async () => {
    const err = await failure(() => compileTemplate(`{.${'a'.repeat(DEFAULT_JSONPATH_LIMITS.maxTemplateLength)}}`));
    expect(jsonPathStatus(err.kind)).toBe(413);
    expect(err.kind).toBe('limit');
    expect(err.message).toContain(`the limit is ${DEFAULT_JSONPATH_LIMITS.maxTemplateLength}`);
    expect(compileTemplate('{.a}', { maxTemplateLength: 4 }).source).toBe('{.a}');
    expect(jsonPathStatus((await failure(() => compileTemplate('{.ab}', { maxTemplateLength: 4 }))).kind)).toBe(413);
  });

  test('a template with more than maxNodes parts is 413', async () => {
    const err = await failure(() => compileTemplate('{.a.b.c.d}', { maxNodes: 3 }));
    expect(jsonPathStatus(err.kind)).toBe(413);
    expect(err.message).toContain('more than 3 parts');
    expect(jsonPathStatus((await failure(() => compileTemplate(`{${'[0]'.repeat(1000)}}`, { maxNodes: 500 }))).kind)).toBe(413);
  });

  test('10 000 nested {range} blocks: 413 by length by default, a clean 400 when the length is allowed', async () => {
    const template = '{range @}'.repeat(10_000);
    expect(jsonPathStatus((await failure(() => compileTemplate(template))).kind)).toBe(413);
    const err = await failure(() => compileTemplate(template, roomy));
    expect(jsonPathStatus(err.kind)).toBe(400);
    expect(err.kind).toBe('depth');
    expect(err.message).toContain(`range blocks nest deeper than ${DEFAULT_JSONPATH_LIMITS.maxDepth} levels`);
  });

  test('range blocks deeper than maxDepth are refused even within the length limit', async () => {
    expect(jsonPathStatus((await failure(() => compileTemplate('{range @}'.repeat(100)))).kind)).toBe(400);
    const closed = `${'{range @}'.repeat(60)}x${'{end}'.repeat(60)}`;
    expect(await selectText(compileTemplate(closed), [1])).toBe('x');
    expect(jsonPathStatus((await failure(() => compileTemplate(closed, { maxDepth: 10 }))).kind)).toBe(400);
  });

  test('range depth is also bounded while evaluating', async () => {
    const template = compileTemplate(`${'{range @}'.repeat(20)}x${'{end}'.repeat(20)}`);
    const err = await failure(() => selectText(template, [1], { maxDepth: 5 }));
    expect(jsonPathStatus(err.kind)).toBe(400);
    expect(err.kind).toBe('depth');
  });

  test.each([
    ['brackets', `{${'['.repeat(10_000)}${']'.repeat(10_000)}}`],
    ['filters', `{${'[?(@'.repeat(10_000)}${')]'.repeat(10_000)}}`],
    ['quotes', `{${'"'.repeat(10_001)}}`],
    ['parentheses', `{[?(${'('.repeat(10_000)}@.a${')'.repeat(10_000)})]}`],
    ['unions', `{[${'[0,'.repeat(10_000)}0${']'.repeat(10_000)}}`],
    ['braces', `{${'{'.repeat(10_000)}${'}'.repeat(10_000)}}`],
  ])('10 000 nested %s are a clean 400', async (_what, template) => {
    const err = await failure(() => compileTemplate(template, roomy));
    expect(jsonPathStatus(err.kind)).toBe(400);
    expect(err.kind).toBe('parse');
  });

  test('sub-expressions (filters inside bracket keys inside filters) are bounded by maxDepth', async () => {
    // A quoted region hides the inner filter's ')' from the outer one, so this really nests.
    const nested = "{[?(@.a'[?(@.b)]'')]}";
    expect(describeParseTree(compileTemplate(nested))).toEqual([
      'NodeList',
      'NodeFilter: NodeList exists NodeList',
      'NodeList',
      "NodeField: a'",
      'NodeFilter: NodeList exists NodeList',
      'NodeList',
      'NodeField: b',
      'NodeList',
      'NodeText: ',
      'NodeList',
    ]);
    const err = await failure(() => compileTemplate(nested, { maxDepth: 1 }));
    expect(jsonPathStatus(err.kind)).toBe(400);
    expect(err.kind).toBe('depth');
    expect(err.message).toContain('nest deeper than 1');
  });

  test('a long template parses (linear work: 400 000 steps)', () => {
    const template = compileTemplate(`{${'.a'.repeat(400_000)}}`, roomy);
    expect(describeParseTree(template)).toHaveLength(400_001);
  });
});

describe('evaluation work', () => {
  test('nested ranges that multiply are stopped by maxSteps (413)', async () => {
    // 1000 × 1000 × 1000 iterations; inside a range `@` (and `$`) is the current item.
    const cube = new Array(1000).fill(new Array(1000).fill(new Array(1000).fill(0)));
    const template = compileTemplate('{range @[*]}{range @[*]}{range @[*]}x{end}{end}{end}');
    const err = await failure(() => selectText(template, cube));
    expect(jsonPathStatus(err.kind)).toBe(413);
    expect(err.kind).toBe('limit');
    expect(err.message).toContain(`more than ${DEFAULT_JSONPATH_LIMITS.maxSteps} steps`);
  });

  test('recursive descent over cyclic data stops at a limit', async () => {
    const cyclic: { self?: unknown; list: unknown[] } = { list: [] };
    cyclic.self = cyclic;
    cyclic.list.push(cyclic);
    const err = await failure(() => selectText(compileTemplate('{..}'), cyclic));
    expect(jsonPathStatus(err.kind)).toBe(413);
    const bySteps = await failure(() => selectText(compileTemplate('{..}'), cyclic, { maxSteps: 5000, maxResults: 1_000_000 }));
    expect(bySteps.message).toContain('more than 5000 steps');
  });

  test.each([
    // element count, string length, steps allowed, refused?
    [1000, 10_240, 100_000, true], // ~320 steps per comparison of two 10 KB strings
    [1000, 10_240, 400_000, false],
    [1000, 10, 100_000, false], // short strings cost what they always did
    [100_000, 10, 100_000, true], // as many elements as steps
  ])(
    'string comparisons in filters are charged by length: %d strings of %d characters within %d steps → refused %s',
    async (count, length, maxSteps, refused) => {
      // Equal strings: the comparison reads every character.
      const items = Array.from({ length: count }, () => ({ note: 'n'.repeat(length) }));
      const template = compileTemplate('{.items[?(@.note<@.note)]}');
      if (refused) {
        const err = await failure(() => selectJsonSliced(template, { items }, { maxSteps, maxResults: 1_000_000 }));
        expect(jsonPathStatus(err.kind)).toBe(413);
        expect(err.message).toContain(`more than ${maxSteps} steps`);
      } else {
        expect(await selectJsonSliced(template, { items }, { maxSteps, maxResults: 1_000_000 })).toEqual({ kind: 'value', value: [] });
      }
    },
  );

  test('random long-string filters: whatever the sizes and operator, the characters compared stay within the step budget', async () => {
    const SEED = 1124;
    const rand = prng(SEED);
    const operators = ['<', '<=', '>', '>=', '==', '!='];
    for (let run = 0; run < 40; run++) {
      const count = 1 + Math.floor(rand() * 2000);
      const length = 1 + Math.floor(rand() ** 2 * 40_000);
      const maxSteps = 1000 + Math.floor(rand() * 100_000);
      const op = operators[Math.floor(rand() * operators.length)]!;
      // Equal strings, so every comparison reads both whole: count × length characters per filter.
      const items = Array.from({ length: count }, () => ({ note: 'n'.repeat(length) }));
      const template = compileTemplate(`{.items[?(@.note${op}@.note)]}`);
      const charged = count * Math.floor(length / 32);
      let refused = false;
      try {
        await selectJsonSliced(template, { items }, { maxSteps, maxResults: 1_000_000 });
      } catch (err) {
        if (!(err instanceof JsonPathError) || jsonPathStatus(err.kind) !== 413) throw err;
        refused = true;
      }
      const context = { seed: SEED, run, count, length, maxSteps, op };
      // Over budget by characters alone: always refused. Far under it: never refused.
      if (charged > maxSteps) expect({ ...context, refused }).toEqual({ ...context, refused: true });
      else if (count + charged * 2 < maxSteps / 2) expect({ ...context, refused }).toEqual({ ...context, refused: false });
    }
  });

  test('code point order is kept with and without surrogates', async () => {
    const items = ['\uFFFF', '\uD83D\uDE00', 'b', 'a'].map((v) => ({ v }));
    // U+1F600 (a surrogate pair) sorts after U+FFFF by code point, before it by UTF-16 unit.
    expect(await selectJsonSliced(compileTemplate('{.items[?(@.v<"\uFFFF")].v}'), { items })).toEqual({ kind: 'value', value: ['b', 'a'] });
    expect(await selectJsonSliced(compileTemplate('{.items[?(@.v>"\uFFFF")].v}'), { items })).toEqual({
      kind: 'value',
      value: ['\uD83D\uDE00'],
    });
  });

  test('more values than maxResults at once is 413', async () => {
    const big = { list: new Array(2000).fill(1) };
    expect(await selectJsonSliced(compileTemplate('{.list[*]}'), big, { maxResults: 2000 })).toEqual({ kind: 'value', value: big.list });
    const err = await failure(() => selectJsonSliced(compileTemplate('{.list[*]}'), big, { maxResults: 1999 }));
    expect(jsonPathStatus(err.kind)).toBe(413);
    expect(err.message).toContain('more than 1999 values');
  });

  test('output over maxOutputBytes is 413, counted in UTF-8 bytes', async () => {
    expect(await selectText(compileTemplate('{.s}'), { s: 'x'.repeat(1000) }, { maxOutputBytes: 1000 })).toHaveLength(1000);
    expect(
      jsonPathStatus(
        (await failure(() => selectText(compileTemplate('{.s}{.s}'), { s: 'x'.repeat(1000) }, { maxOutputBytes: 1000 }))).kind,
      ),
    ).toBe(413);
    expect(
      jsonPathStatus((await failure(() => selectText(compileTemplate('{.s}'), { s: 'é'.repeat(600) }, { maxOutputBytes: 1000 }))).kind),
    ).toBe(413);
    const object = { list: Array.from({ length: 1000 }, (_, i) => ({ i })) };
    const err = await failure(() => selectText(compileTemplate('{.list}'), object, { maxOutputBytes: 100 }));
    expect(jsonPathStatus(err.kind)).toBe(413);
    expect(err.message).toContain('larger than 100 bytes');
  });

  test('a cyclic value selected for printing is a 400, not a hang', async () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.again = { a };
    const err = await failure(() => selectText(compileTemplate('{.again}'), a));
    expect(jsonPathStatus(err.kind)).toBe(400);
    expect(err.message).toContain('reference cycle');
  });

  test('large and deep values print as Go writes them, in pieces, and a cycle or the budget fails cleanly', async () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const wide = { list: Array.from({ length: 20_000 }, (_, i) => ({ z: i, a: `<${i}>`, m: { k: [i, -0.5, true, null] } })) };
    const wideGo = `{"list":[${wide.list.map((_, i) => `{"a":"\\u003c${i}\\u003e","m":{"k":[${i},-0.5,true,null]},"z":${i}}`).join(',')}]}`;
    for (const [data, expected] of [
      [deep, `${'['.repeat(100_000)}"bottom"${']'.repeat(100_000)}`],
      [wide, wideGo],
    ] as const) {
      const pieces = await selectTextSliced(compileTemplate('{}'), data);
      expect(pieces.length).toBeGreaterThan(1);
      expect(pieces.join('')).toBe(expected);
    }
    const a: Record<string, unknown> = { name: 'a' };
    a.again = { a };
    await expect(selectTextSliced(compileTemplate('{.again}'), a)).rejects.toMatchObject({
      kind: 'type',
      message: expect.stringContaining('reference cycle'),
    });
    await expect(selectTextSliced(compileTemplate('{.list}'), wide, { maxOutputBytes: 1000 })).rejects.toMatchObject({ kind: 'limit' });
  });

  test('data nested 100 000 deep prints and descends without a stack overflow', async () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const printed = await selectText(compileTemplate('{}'), deep);
    expect(printed).toHaveLength(200_000 + '"bottom"'.length);
    expect(printed.startsWith('[[[')).toBe(true);
    const found = (await selectJsonSliced(compileTemplate('{..}'), deep, { maxSteps: 10_000_000, maxResults: 1_000_000 })) as {
      value: unknown[];
    };
    expect(found.value).toHaveLength(100_001);
    expect(found.value[100_000]).toBe('bottom');
  });
});

describe('only what the path names is touched', () => {
  /**
   * Data whose every key is recorded, with a huge member that throws if anything reaches into it
   * beyond `toJSON` (the one property every value is asked for, as JSON.stringify asks it).
   */
  function guardedData(): { data: Record<string, unknown>; touched: string[]; payload: unknown } {
    const touched: string[] = [];
    const poison = (): never => {
      throw new Error('the unselected part of the data was touched');
    };
    const payload = new Proxy(
      {},
      {
        get: (_t, key) => (key === 'toJSON' ? undefined : poison()),
        has: poison,
        ownKeys: poison,
        getOwnPropertyDescriptor: poison,
        getPrototypeOf: poison,
      },
    );
    const target = { version: '42', meta: { name: 'lb', replicas: 3 }, items: [{ name: 'a' }, { name: 'b' }], payload };
    const data = new Proxy(target, {
      get(t, key, receiver) {
        if (key !== 'toJSON') touched.push(`get:${String(key)}`);
        return Reflect.get(t, key, receiver);
      },
      getOwnPropertyDescriptor(t, key) {
        touched.push(`own:${String(key)}`);
        return Reflect.getOwnPropertyDescriptor(t, key);
      },
      ownKeys(t) {
        touched.push('ownKeys');
        return Reflect.ownKeys(t);
      },
    });
    return { data, touched, payload };
  }

  test('{.version} reads the one key, in both modes', async () => {
    const { data, touched } = guardedData();
    expect(await selectJsonSliced(compileTemplate('{.version}'), data)).toEqual({ kind: 'value', value: '42' });
    expect(await selectText(compileTemplate('{.version}'), data)).toBe('42');
    expect(touched).toEqual(['own:version', 'own:version']);
  });

  test('a deeper path and a filter walk only their own branch', async () => {
    const { data, touched } = guardedData();
    expect(await selectText(compileTemplate('{.meta.name} {.meta.replicas}'), data)).toBe('lb 3');
    expect((await execute(compileTemplate('{.items[?(@.name=="b")].name}'), data)).output).toBe('b');
    expect(touched).toEqual(['own:meta', 'own:meta', 'own:items']);
  });

  test('the huge member is handed back as is, never walked or copied', async () => {
    const { data, payload } = guardedData();
    expect(((await selectJsonSliced(compileTemplate('{.payload}'), data)) as { value: unknown }).value).toBe(payload);
  });

  test('a 50 MB value beside the selected key costs nothing', async () => {
    const data = { version: '7', blob: 'x'.repeat(50 * 1024 * 1024), list: new Array(1_000_000).fill({ a: 1 }) };
    expect(await selectJsonSliced(compileTemplate('{.version}'), data, { maxSteps: 100 })).toEqual({ kind: 'value', value: '7' });
    expect(await selectText(compileTemplate('{.version}'), data, { maxSteps: 100, maxOutputBytes: 10 })).toBe('7');
    expect(await selectJsonSliced(compileTemplate('{.list[999999].a}'), data, { maxSteps: 100 })).toEqual({ kind: 'value', value: 1 });
  });
});
