import { jsonPathStatus } from '../../lib/introspection/errors';
import * as fs from 'fs';
import * as path from 'path';
import { describeParseTree } from './describe';
import { JsonPathError, compileTemplate, execute } from '../../lib/jsonpath';
import { selectText } from './helpers';

/**
 * The 156 cases recorded from k8s.io/client-go/util/jsonpath v0.35.0 (shared/conformance/jsonpath),
 * run through our engine: same parse tree, same output, same selected values, same kind of error.
 */

interface ConformanceCase {
  name: string;
  template: string;
  allowMissingKeys: boolean;
  decoding: 'json' | 'unstructured';
  data: unknown;
  output: string;
  results: unknown[] | null;
  resultGroups: unknown[][] | null;
  error: string | null;
  errorKind: 'parse' | 'execute' | null;
  nondeterministic: boolean;
  observedOutputs?: string[];
  parseTree: string[] | null;
}

const cases: ConformanceCase[] = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'jsonpath-cases.json'), 'utf8'));

/**
 * Deliberate extension: numbers compare numerically in filters whatever their form. The engine
 * errors on these only because Go will not compare an int64 with a float64, so we assert our answer.
 */
const NUMERIC_FILTER_EXTENSION: Readonly<Record<string, { output: string; resultGroups: unknown[][] }>> = {
  // `{[?(@.price<3)]}` on [{price:1},{price:5},{price:2.5}]: the literal 3 is an int and 2.5 a
  // float (every price is a float with decoding "json"), so Go answers "incompatible types for
  // comparison" in either decoding. Numerically, 1 and 2.5 are below 3.
  'TestParser/filter': {
    output: '{"price":1} {"price":2.5}',
    resultGroups: [[{ price: 1 }, { price: 2.5 }]],
  },
  // `{[?(@<5)]}` on [2,6,3,7]: with decoding "json" every element is a float64 and the literal 5 an
  // int, so Go errors; with integers kept (TestStructInput/filter, "unstructured") it answers "2 3",
  // which is what the contract says to answer.
  'TestStructInput/filter [decoding=json]': {
    output: '2 3',
    resultGroups: [[2, 3]],
  },
};

/** Go names its own types where we name JSON ones; everywhere else our message contains Go's text. */
function expectedMessagePart(goError: string): string {
  return goError.replace(/^map\[string\]interface \{\} is not array or slice$/, 'object is not an array');
}

function expectedStatus(c: ConformanceCase): number {
  if (c.errorKind === 'parse') return 400;
  return /is not found|array index out of bounds/.test(c.error ?? '') ? 404 : 400;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

const asMultiset = (values: unknown[]): string[] => values.map((v) => JSON.stringify(v)).sort();

async function runCase(c: ConformanceCase): Promise<{ output: string; resultGroups: unknown[][] }> {
  const data = deepFreeze(structuredClone(c.data));
  return execute(compileTemplate(c.template), data, { allowMissingKeys: c.allowMissingKeys });
}

test('the fixture holds every recorded case', () => {
  expect(cases).toHaveLength(156);
  expect(new Set(cases.map((c) => c.name)).size).toBe(156);
});

describe.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
  const extension = NUMERIC_FILTER_EXTENSION[c.name];

  if (c.parseTree !== null) {
    test('parses into the same tree', () => {
      expect(describeParseTree(compileTemplate(c.template))).toEqual(c.parseTree);
    });
  }

  if (extension !== undefined) {
    test(`extension: answers numerically where Go refused (${c.error})`, async () => {
      expect(c.errorKind).toBe('execute');
      const { output, resultGroups } = await runCase(c);
      expect(output).toBe(extension.output);
      expect(resultGroups).toEqual(extension.resultGroups);
    });
    return;
  }

  if (c.errorKind !== null) {
    test(`fails with a ${c.errorKind} error and prints nothing`, async () => {
      let thrown: unknown;
      let result: unknown;
      try {
        result = await runCase(c);
      } catch (err) {
        thrown = err;
      }
      expect(result).toBeUndefined();
      expect(thrown).toBeInstanceOf(JsonPathError);
      const err = thrown as JsonPathError;
      expect(err.kind === 'type' || err.kind === 'not-found' ? 'execute' : err.kind).toBe(c.errorKind);
      expect(jsonPathStatus(err.kind)).toBe(expectedStatus(c));
      expect(err.message).toContain(expectedMessagePart(c.error as string));
      expect(err.message).toContain(c.template.slice(0, 60));
    });
    return;
  }

  test('prints the same output and selects the same values', async () => {
    const { output, resultGroups } = await runCase(c);
    if (c.nondeterministic) {
      // Go's map order is random: our (insertion) order must be one the engine was seen to print,
      // and each group must hold the same values in some order.
      expect(c.observedOutputs).toContain(output);
      expect(resultGroups.map(asMultiset)).toEqual((c.resultGroups as unknown[][]).map(asMultiset));
    } else {
      expect(output).toBe(c.output);
      expect(resultGroups).toEqual(c.resultGroups);
    }
  });

  test('text mode (missing keys allowed) prints the same', async () => {
    const text = await selectText(compileTemplate(c.template), deepFreeze(structuredClone(c.data)));
    if (c.nondeterministic) expect(c.observedOutputs).toContain(text);
    else expect(text).toBe(c.output);
  });
});
