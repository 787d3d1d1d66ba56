import { jsonPathStatus } from '../../lib/introspection/errors';
import { HttpError } from '../../lib/http/errors';
import { compileTemplate, execute, selectJsonSliced, templateShape, type FieldSelection } from '../../lib/jsonpath';
import { failure, selectText } from './helpers';

/** The JSON-mode contract of `?field=`: what shape answers what, and which status each failure gets. */

const json = (template: string, data: unknown): Promise<FieldSelection> => selectJsonSliced(compileTemplate(template), data);
const text = (template: string, data: unknown): Promise<string> => selectText(compileTemplate(template), data);

const config = {
  version: '42',
  size: 1234567,
  config: { templates: { haproxy: 'global\n  daemon\n' }, watched_resources: [] },
  events: [
    { type: 'config.validated', summary: 'ok' },
    { type: 'reconciliation.triggered', summary: 'tick' },
  ],
  'kubernetes.io/name': 'lb',
  empty: null,
};

describe('template shape', () => {
  test.each([
    '{.version}',
    '{ .version }',
    '{$.version}',
    '{@.config.templates.haproxy}',
    '{.events[0]}',
    '{.events[-1].type}',
    "{['version']}",
    "{.config['templates']}",
    '{.kubernetes\\.io/name}',
    '{}',
    '{@}',
  ])('%s is singular', (template) => {
    expect(templateShape(compileTemplate(template))).toBe('singular');
  });

  test.each([
    '{.events[*].type}',
    '{.events[0:1]}',
    '{.events[:]}',
    '{..type}',
    '{.events[?(@.type=="config.validated")]}',
    "{.events[0]['type','summary']}",
    '{.config.*}',
    '{[0,1]}',
  ])('%s is not singular', (template) => {
    expect(templateShape(compileTemplate(template))).toBe('multiple');
  });

  test.each([
    '',
    'version',
    'v{.version}',
    '{.version}{.size}',
    '{.version}\n',
    '{range .events[*]}{.type}{end}',
    '{"literal"}',
    '{1}',
    '{true}',
    "{['a b']}",
    '{.version range}',
  ])('%j is printed text', (template) => {
    expect(templateShape(compileTemplate(template))).toBe('text');
  });
});

describe('answers', () => {
  test('a singular path answers the value as typed in the data', async () => {
    expect(await json('{.version}', config)).toEqual({ kind: 'value', value: '42' });
    expect(await json('{.size}', config)).toEqual({ kind: 'value', value: 1234567 });
    expect(await json('{.empty}', config)).toEqual({ kind: 'value', value: null });
    expect(await json('{.events[-1].summary}', config)).toEqual({ kind: 'value', value: 'tick' });
    expect(await json('{.kubernetes\\.io/name}', config)).toEqual({ kind: 'value', value: 'lb' });
  });

  test('a singular path answers the live object, not a copy', async () => {
    const selection = await selectJsonSliced(compileTemplate('{.config.templates}'), config);
    expect(selection.kind).toBe('value');
    expect((selection as { value: unknown }).value).toBe(config.config.templates);
  });

  test('{} answers the whole value, and null for a null root', async () => {
    expect(((await selectJsonSliced(compileTemplate('{}'), config)) as { value: unknown }).value).toBe(config);
    expect(await json('{@}', null)).toEqual({ kind: 'value', value: null });
    expect(await text('{@}', null)).toBe('<no value>');
  });

  test('a non-singular path answers every selected value in order, possibly none', async () => {
    expect(await json('{.events[*].type}', config)).toEqual({ kind: 'value', value: ['config.validated', 'reconciliation.triggered'] });
    expect(await json('{.events[?(@.summary=="tick")].type}', config)).toEqual({ kind: 'value', value: ['reconciliation.triggered'] });
    expect(await json('{.config.watched_resources[*]}', config)).toEqual({ kind: 'value', value: [] });
    expect(await json('{.events[5:5]}', config)).toEqual({ kind: 'value', value: [] });
    const all = (await selectJsonSliced(compileTemplate('{.events[*]}'), config)) as { value: unknown[] };
    expect(all.value[0]).toBe(config.events[0]);
  });

  test('any other template answers the printed text as one string', async () => {
    expect(await json('{range .events[*]}{.type}{"\\n"}{end}', config)).toEqual({
      kind: 'text',
      text: 'config.validated\nreconciliation.triggered\n',
    });
    expect(await json('v{.version} size={.size}', config)).toEqual({ kind: 'text', text: 'v42 size=1234567' });
    expect(await json('', config)).toEqual({ kind: 'text', text: '' });
  });

  test('text mode prints integers in full and objects as compact sorted JSON', async () => {
    expect(await text('{.size}', config)).toBe('1234567');
    expect(await text('{.events[0]}', config)).toBe('{"summary":"ok","type":"config.validated"}');
    expect(await text('{.config.templates.haproxy}', config)).toBe('global\n  daemon\n');
  });
});

describe('errors', () => {
  test('a missing key is 404 in JSON mode and nothing in text mode', async () => {
    const err = await failure(() => json('{.config.nothere}', config));
    expect(jsonPathStatus(err.kind)).toBe(404);
    expect(err.kind).toBe('not-found');
    expect(err.message).toContain('{.config.nothere}');
    expect(err.message).toContain('.config.nothere');
    expect(err.message).toContain('nothere is not found');
    expect(await text('{.config.nothere}', config)).toBe('');
    expect(await text('a{.nothere}b', config)).toBe('ab');
  });

  test('missing keys are errors for every JSON-mode shape', async () => {
    expect(jsonPathStatus((await failure(() => json('{.events[*].nothere}', config))).kind)).toBe(404);
    expect(jsonPathStatus((await failure(() => json('x{.nothere}', config))).kind)).toBe(404);
  });

  test('elements lacking a key are skipped while others have it', async () => {
    const data = { items: [{ name: 'a' }, {}, { name: 'c' }] };
    expect(await json('{.items[*].name}', data)).toEqual({ kind: 'value', value: ['a', 'c'] });
  });

  test('an index out of range is 404, in both modes', async () => {
    const err = await failure(() => json('{.events[7]}', config));
    expect(jsonPathStatus(err.kind)).toBe(404);
    expect(err.message).toContain('array index out of bounds: index 7, length 2');
    expect(err.message).toContain('.events[7]');
    expect(jsonPathStatus((await failure(() => text('{.events[7]}', config))).kind)).toBe(404);
    expect(jsonPathStatus((await failure(() => json('{.events[0:9]}', config))).kind)).toBe(404);
  });

  test('a null met by an index selects nothing: 404 in JSON mode, empty text', async () => {
    const err = await failure(() => json('{.empty[0]}', config));
    expect(jsonPathStatus(err.kind)).toBe(404);
    expect(err.message).toContain('selected no value');
    expect(await text('{.empty[0]}', config)).toBe('');
  });

  test.each([
    ['{.config[0]}', 'object is not an array'],
    ['{.version[0]}', 'string is not an array'],
    ['{.config[?(@.x)]}', 'object is not an array, so it cannot be filtered'],
    ['{.events[?(@.summary>1)]}', 'incompatible types for comparison'],
    ['{.events[?(@.summary<true)]}', 'incompatible types for comparison'],
    ['{.events[?(@<1)]}', 'invalid type for comparison'],
    ['{.events[?(@.summary=<"a")]}', 'unrecognized filter operator =<'],
    ['{.events[1:0]}', 'starting index 1 is greater than ending index 0'],
    ['{.events[0:2:0]}', 'step must be > 0'],
    ['{version}', 'unrecognized identifier version'],
    ['{end}', 'not in range, nothing to end'],
  ])('%s is a type error: 400 naming the step', async (template, detail) => {
    const err = await failure(() => json(template, config));
    expect(jsonPathStatus(err.kind)).toBe(400);
    expect(err.kind).toBe('type');
    expect(err.message).toContain(detail);
    expect(err.message).toContain(template);
  });

  test('inside a filter the message says where the filter is', async () => {
    const err = await failure(() => json('{.events[?(@.meta.name=="x")]}', config));
    expect(jsonPathStatus(err.kind)).toBe(404);
    expect(err.message).toContain('at "@.meta" inside ".events[?(@.meta.name=="x")]": meta is not found');
  });

  test.each([
    ['{.version', 'unclosed action', 'at the end'],
    ['{.events[0}', 'unterminated array', 'at character 9 ("[0}")'],
    ['{.events[?(@.x==1]}', 'unterminated filter', 'at character 9'],
    ['{.events[a]}', 'invalid array index a', 'at character 9'],
    ['{.events["a"]}', `invalid array index "a" (a key in brackets takes single quotes: ['key'])`, 'at character 9'],
    ['{.events[ 0]}', 'invalid array index  0 (no spaces are allowed inside brackets)', 'at character 9'],
    ['{.a[?(@.x=~"y")]}', "unrecognized character in action: U+007E '~'", 'at character 4'],
    ['{.a[?(@.x && @.y)]}', "unrecognized character in action: U+0026 '&'", 'at character 4'],
    ['{*}', "unrecognized character in action: U+002A '*'", 'at character 2 ("*}")'],
    ['{.a}{.b\t}', 'unrecognized character in action: U+0009', 'at character 8'],
    ['{1.2.3}', 'cannot parse number 1.2.3', 'at character 2'],
    ['{....a}', 'invalid multiple recursive descent', 'at character 4'],
    ['{"abc}', 'unterminated quoted string', 'at character 2'],
    ['{"\\q"}', 'unquote string "\\q" error invalid syntax', ''],
    ["{['a']['b}", 'unterminated array', ''],
  ])('%j does not parse: 400 naming the template and where', async (template, detail, where) => {
    const err = await failure(() => compileTemplate(template));
    expect(jsonPathStatus(err.kind)).toBe(400);
    expect(err.kind).toBe('parse');
    expect(err.message).toContain(`invalid JSONPath template "${template.replace('\t', '\\t')}"`);
    expect(err.message).toContain(detail);
    expect(err.message).toContain(where);
  });

  test("['a.b'] reads as .a.b, and the message says how to write a key with dots", async () => {
    const data = { 'a.b': 1, labels: { 'app.kubernetes.io/name': 'lb' } };
    const err = await failure(() => json("{['a.b']}", data));
    expect(jsonPathStatus(err.kind)).toBe(404);
    expect(err.message).toContain('a is not found');
    expect(err.message).toContain("['a\\.b']");
    expect(err.message).toContain('.a\\.b');
    expect(await json("{['a\\.b']}", data)).toEqual({ kind: 'value', value: 1 });
    expect(await json('{.a\\.b}', data)).toEqual({ kind: 'value', value: 1 });
    expect(await json("{.labels['app\\.kubernetes\\.io/name']}", data)).toEqual({ kind: 'value', value: 'lb' });
    expect((await failure(() => json("{.labels['app.kubernetes.io/name']}", data))).message).toContain("['app\\.kubernetes\\.io/name']");
  });

  test('an error means no output at all, not even the text before it', async () => {
    const err = await failure(() => execute(compileTemplate('before {.version} {.nothere} after'), config));
    expect(jsonPathStatus(err.kind)).toBe(404);
  });

  test('errors know nothing of HTTP: a kind, which the vars router maps to a status', async () => {
    const err = await failure(() => json('{.nothere}', config));
    expect(err).not.toBeInstanceOf(HttpError);
    expect(err).not.toHaveProperty('status');
    expect(err).toBeInstanceOf(Error);
    expect(err.kind).toBe('not-found');
    expect(err.name).toBe('JsonPathError');
    expect(err.template).toBe('{.nothere}');
    expect(err.detail).toBe('nothere is not found');
  });
});

describe('programming errors are TypeErrors', () => {
  test('a template that is not a string', () => {
    expect(() => compileTemplate(42 as unknown as string)).toThrow(TypeError);
  });

  test('a template object compileTemplate did not make', async () => {
    await expect(selectJsonSliced({ source: '{.a}' }, {})).rejects.toThrow(/compileTemplate/);
  });

  test.each([{ maxSteps: 0 }, { maxDepth: 1.5 }, { maxNodes: -1 }, { nope: 1 }])('bad limits %j', (limits) => {
    expect(() => compileTemplate('{.a}', limits as unknown as Record<string, number>)).toThrow(TypeError);
  });
});
