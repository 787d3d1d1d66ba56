import { JsonPathError, compileTemplate, execute, selectJsonSliced } from '../../lib/jsonpath';
import { selectText } from './helpers';
import { prng } from '../helpers/prng';

/**
 * Random templates built from grammar fragments and random characters: whatever they are, the
 * engine answers or throws a JsonPathError with an HTTP status, never a TypeError or RangeError.
 */

const FRAGMENTS = [
  '{',
  '}',
  '{}',
  '.',
  '..',
  '...',
  '[',
  ']',
  '[*]',
  '[0]',
  '[-1]',
  '[1:2]',
  '[::2]',
  '[:-1:]',
  '[]',
  '[1,0]',
  '[?(',
  ')]',
  '@',
  '$',
  '.a',
  '.b',
  '.c',
  '.*',
  "['a']",
  "['a.b']",
  "['a','b']",
  "['a\\.b']",
  '"x"',
  "'y'",
  '"\\u00e9"',
  '"\\q"',
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '=~',
  '&&',
  '||',
  '!',
  '1',
  '-1',
  '+2',
  '1.5',
  '1.2.3',
  'true',
  'false',
  'range',
  'end',
  'hello',
  ' ',
  ',',
  '\\',
  '\n',
  '\r',
  '\t',
  '(',
  ')',
  "'",
  '"',
  ':',
  '-',
  '{range .a[*]}',
  '{range @}',
  '{end}',
  '{.a}',
  '{..}',
  '{@.b.c[*]}',
  '{[?(@.b==1)]}',
  '{.a[?(@.b)]}',
  '{.a[?(@.b>0)].b}',
  '{.b.c[?(@<2)]}',
  '{.a[0:2:1]}',
  '\\.',
  'é',
  '\u{1F600}',
  '\ud800',
  '\u0000',
];

const DATA: unknown[] = [
  { a: [{ b: 1 }, { b: 'x' }, null, { b: [1, { c: 2 }] }], 'a.b': 2, b: { c: [1, 2.5, 3] }, c: 'str', d: true },
  [1, 'two', [3, [4]], { a: null }],
  null,
  'plain string',
  { a: { a: { a: { a: 'deep' } } }, b: [], c: {} },
];

const LIMITS = { maxSteps: 20_000, maxResults: 5_000, maxOutputBytes: 100_000 };

function randomTemplate(random: () => number): string {
  let template = '';
  const parts = 1 + Math.floor(random() * 12);
  for (let i = 0; i < parts; i++) {
    const pick = random();
    if (pick < 0.75) {
      template += FRAGMENTS[Math.floor(random() * FRAGMENTS.length)];
    } else if (pick < 0.9) {
      template += String.fromCharCode(0x20 + Math.floor(random() * 0x5f));
    } else {
      template += String.fromCharCode(Math.floor(random() * 0x10000));
    }
  }
  // Most templates should be actions, or the parser would mostly see plain text.
  return random() < 0.6 ? `{${template}}` : template;
}

/** Runs `work`; returns undefined on success or a JsonPathError, and a description of anything else. */
async function unexpected(template: string, work: () => unknown): Promise<string | undefined> {
  try {
    await work();
    return undefined;
  } catch (err) {
    if (err instanceof JsonPathError && ['parse', 'type', 'not-found', 'depth', 'limit'].includes(err.kind) && err.message.length > 0)
      return undefined;
    return `${JSON.stringify(template)}: ${err instanceof Error ? `${err.name}: ${err.message}` : String(err)}`;
  }
}

test('3000 random templates only ever throw JsonPathError', async () => {
  const random = prng(20261122);
  const problems: string[] = [];
  let compiled = 0;
  for (let n = 0; n < 3000 && problems.length < 5; n++) {
    const template = randomTemplate(random);
    let parsed: ReturnType<typeof compileTemplate> | undefined;
    const compileProblem = await unexpected(template, () => {
      parsed = compileTemplate(template, LIMITS);
    });
    if (compileProblem !== undefined) problems.push(compileProblem);
    if (parsed === undefined) continue;
    if (template.includes('{')) compiled++;
    const t = parsed;
    for (const data of DATA) {
      for (const problem of [
        await unexpected(template, () => selectText(t, data, LIMITS)),
        await unexpected(template, () => selectJsonSliced(t, data, LIMITS)),
        await unexpected(template, () => execute(t, data, { allowMissingKeys: false, limits: LIMITS })),
      ]) {
        if (problem !== undefined) problems.push(problem);
      }
    }
  }
  expect(problems).toEqual([]);
  // The generator must exercise evaluation of actions, not only the parser's error paths.
  expect(compiled).toBeGreaterThan(500);
});
