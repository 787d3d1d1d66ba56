/**
 * Class-level check of the JSON view: for random host values mixing toJSON() objects (hiding
 * fields, adding fields, returning primitives), Dates, Buffers, typed arrays, non-finite numbers
 * and undefined, every template selects exactly what it selects from the same value after a
 * JSON.stringify / JSON.parse round trip — the data a dump serves.
 */
import { compileTemplate, selectJsonSliced } from '../../lib/jsonpath';
import { selectText } from './helpers';
import { prng } from '../helpers/prng';

const random = prng(20261124);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const KEYS = ['a', 'b', 'password', 'data', 'type', 'x', '0', '1'];

function hostValue(depth: number): unknown {
  const roll = random();
  if (depth > 3 || roll < 0.3) return pick<unknown>([1, -2.5, 'text', true, null, Number.NaN, Infinity, undefined, new Date(86_400_000)]);
  if (roll < 0.4) return Buffer.from([1, 2, 3]);
  if (roll < 0.45) return new Float64Array([1, Number.NaN, 3]);
  if (roll < 0.6) return Array.from({ length: 1 + Math.floor(random() * 3) }, () => hostValue(depth + 1));
  const object: Record<string, unknown> = {};
  for (let i = 0; i < 1 + Math.floor(random() * 3); i++) object[pick(KEYS)] = hostValue(depth + 1);
  if (roll < 0.8) return object;
  const inner = hostValue(depth + 1);
  // toJSON that hides, adds, or replaces the object with a primitive or another value.
  const variant = Math.floor(random() * 3);
  return Object.assign(
    Object.create({ toJSON: variant === 0 ? () => ({ shown: inner }) : variant === 1 ? () => ({ ...object, added: inner }) : () => inner }),
    object,
  );
}

const TEMPLATES = [
  '{.a}',
  '{.b.a}',
  '{..password}',
  '{.*}',
  '{..a}',
  '{.a[0]}',
  '{.data}',
  '{.a.type}',
  '{.shown}',
  '{.added.a}',
  '{..0}',
  '{.a.*}',
  '{range .*}{.a}{end}',
];

async function outcome(run: () => unknown): Promise<unknown> {
  try {
    return { ok: await run() };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe('the engine sees what JSON.stringify serialises', () => {
  it('3 000 random host values × templates: same selection as over the JSON round trip, in both modes', async () => {
    let compared = 0;
    for (let i = 0; i < 3000; i++) {
      const value = { a: hostValue(0), b: hostValue(0), data: hostValue(1) };
      const json = JSON.parse(JSON.stringify(value)) as unknown;
      const template = compileTemplate(pick(TEMPLATES));
      // JSON mode hands back the host's own subtree, which the router then serialises: compare bytes.
      expect(await outcome(async () => JSON.stringify(await selectJsonSliced(template, value)))).toEqual(
        await outcome(async () => JSON.stringify(await selectJsonSliced(template, json))),
      );
      expect(await outcome(() => selectText(template, value))).toEqual(await outcome(() => selectText(template, json)));
      compared++;
    }
    expect(compared).toBe(3000);
  });
});
