/**
 * The option tables of the guides, marked `<!-- options: <DEFAULTS> [+name …] -->`, against the
 * frozen defaults object the factory resolves its options with (exported from the package root):
 * the table names every option of the object, plus the `+name` ones that have no default (such as
 * `access`), and nothing else; a plain number, boolean or string default is the one the table
 * states; and a row of a group (`watch`, `limits`) names every option of the group.
 */
import * as api from '../../lib';
import { documentationFiles, readRepoFile, tableAfter } from '../helpers/markdown';

interface OptionTable {
  readonly file: string;
  readonly comment: string;
  readonly defaults: string;
  readonly extra: readonly string[];
}

function optionTables(): OptionTable[] {
  return documentationFiles().flatMap((file) =>
    [...readRepoFile(file).matchAll(/^<!-- options: (\w+)((?: \+\w+)*) -->$/gm)].map((m) => ({
      file,
      comment: m[0],
      defaults: m[1]!,
      extra: m[2]!.split(' +').slice(1),
    })),
  );
}

/** What is wrong with one row, given the default of the option it documents. */
function rowProblems(name: string, cells: readonly string[], value: unknown): string[] {
  const [, stated = '', meaning = ''] = cells;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'string') {
    const text = stated.replace(/[`'\s]/g, '');
    return text === String(value) ? [] : [`${name}: the table says ${JSON.stringify(stated)}, the default is ${JSON.stringify(value)}`];
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && cells.length >= 3 && stated === '') {
    const missing = Object.keys(value).filter((key) => !meaning.includes(`\`${key}\``));
    return missing.length === 0 ? [] : [`${name}: the row does not name ${missing.join(', ')}`];
  }
  return [];
}

describe('option tables of the guides', () => {
  const tables = optionTables();

  it('are found', () => {
    expect(tables.map((t) => t.defaults).sort()).toEqual(
      expect.arrayContaining(['CONTROLLER_METRICS_DEFAULTS', 'INTROSPECTION_ROUTER_DEFAULTS', 'PPROF_DEFAULTS', 'STATE_DEFAULTS']),
    );
  });

  it.each(tables.map((t) => [`${t.file}: ${t.defaults}`, t]))('%s', (_, table) => {
    const defaults = (api as unknown as Record<string, unknown>)[table.defaults];
    if (defaults === null || typeof defaults !== 'object') throw new Error(`the package exports no ${table.defaults}`);
    const rows = tableAfter(table.file, table.comment);
    const documented = rows.map(([name]) => /^`(\w+)`$/.exec(name!)?.[1] ?? name!);
    expect([...documented].sort()).toEqual([...Object.keys(defaults), ...table.extra].sort());
    const problems = rows.flatMap((cells, i) => rowProblems(documented[i]!, cells, (defaults as Record<string, unknown>)[documented[i]!]));
    expect(problems).toEqual([]);
  });
});
