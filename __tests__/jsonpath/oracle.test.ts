import jsonpath from 'jsonpath';
import { compileTemplate, selectJsonSliced } from '../../lib/jsonpath';
import { prng } from '../helpers/prng';

/**
 * A second opinion on simple paths: the `jsonpath` package (Goessner's dialect, a different
 * engine) must select the same values for names, indexes, wildcards and recursive descent, where
 * both dialects agree. It is used here only, never by the library.
 */

const KEYS = ['alpha', 'beta', 'gamma', 'delta'];

/** Random JSON whose keys are plain names, so both dialects spell every path the same way. */
function randomData(random: () => number, depth: number): unknown {
  const pick = random();
  if (depth === 0 || pick < 0.25) {
    const scalars = [1, 2.5, 'text', true, false, null, -3, 'é'];
    return scalars[Math.floor(random() * scalars.length)];
  }
  if (pick < 0.6) return Array.from({ length: 1 + Math.floor(random() * 3) }, () => randomData(random, depth - 1));
  const object: Record<string, unknown> = {};
  for (const key of KEYS) if (random() < 0.6) object[key] = randomData(random, depth - 1);
  return object;
}

/** A path that exists in `data`, as [goessner, kubectl] spellings, with some wildcards mixed in. */
function randomPath(random: () => number, data: unknown): [string, string, boolean] {
  let goessner = '$';
  let kubectl = '';
  let value = data;
  for (let step = 0; step < 4; step++) {
    if (Array.isArray(value) && value.length > 0) {
      if (random() < 0.2) {
        return [`${goessner}[*]`, `${kubectl}[*]`, false];
      }
      const index = Math.floor(random() * value.length);
      goessner += `[${index}]`;
      kubectl += `[${index}]`;
      value = value[index];
    } else if (typeof value === 'object' && value !== null && Object.keys(value).length > 0) {
      if (random() < 0.15) return [`${goessner}.*`, `${kubectl}.*`, false];
      const keys = Object.keys(value);
      const key = keys[Math.floor(random() * keys.length)];
      goessner += `.${key}`;
      kubectl += `.${key}`;
      value = (value as Record<string, unknown>)[key];
    } else {
      break;
    }
  }
  if (random() < 0.2) {
    const key = KEYS[Math.floor(random() * KEYS.length)];
    return [`${goessner}..${key}`, `${kubectl}..${key}`, false];
  }
  return [goessner, kubectl, true];
}

const sorted = (values: unknown[]): string[] => values.map((v) => JSON.stringify(v)).sort();

test('names, indexes and wildcards select what the jsonpath package selects', async () => {
  const random = prng(7);
  let compared = 0;
  for (let n = 0; n < 300; n++) {
    const data = { root: randomData(random, 4) };
    const [goessner, kubectl, singular] = randomPath(random, data);
    const expected = jsonpath.query(data, goessner);
    let selection;
    try {
      selection = await selectJsonSliced(compileTemplate(`{${kubectl}}`), data);
    } catch {
      // Recursive descent for a key nobody has: the kubectl engine says "not found", the other [].
      expect(expected).toEqual([]);
      continue;
    }
    expect(selection.kind).toBe('value');
    const value = (selection as { value: unknown }).value;
    if (singular) {
      expect([value]).toEqual(expected);
    } else if (kubectl.includes('..')) {
      // The dialects visit in different orders; the same values must come out.
      expect(sorted(value as unknown[])).toEqual(sorted(expected));
    } else {
      expect(value).toEqual(expected);
    }
    compared++;
  }
  expect(compared).toBeGreaterThan(250);
});
