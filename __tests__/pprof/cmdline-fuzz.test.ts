import { redactedArgs } from '../../lib/pprof/cmdline';
import { prng } from '../helpers/prng';

/**
 * The redaction of /debug/pprof/cmdline tested as a class: random command lines built from every
 * shape a secret takes (a secret-named flag in any spelling with its value attached, in the next
 * argument or nested in another flag's value; `-p`; URL userinfo; query parameters; headers;
 * JSON; DSNs; command lines inside an argument), around random canary secrets (starting with `-`,
 * holding `=`, `:`, `@`, `/`, non-ASCII letters and emoji), between ordinary arguments whose
 * values must survive. A failure names its seed.
 */

type Random = () => number;

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/** Random letters and digits; `plain` ones cannot spell a secret word (`pw`, `key`, `pat`…). */
function alnum(random: Random, length: number, plain = false): string {
  const alphabet = [...(plain ? 'qvz0123456789' : 'abcdefghijklmnopqrstuvwxyz0123456789')];
  let out = '';
  for (let i = 0; i < length; i++) out += pick(random, alphabet);
  return out;
}

// Characters a canary may hold in every shape: none ends a URL, a token, a quoted string or a pair.
const NARROW = [...'abcXYZ019-=:@./+!~%_', 'é', 'ü', 'ß', '密', 'п', '😀'];
// Where a secret is a whole argument or the rest of one, anything goes.
const WIDE = [...NARROW, ' ', ',', ';', '&', '"', "'", '#', '?', '{', '}', '\\', '\t'];

interface Command {
  args: string[];
  secrets: string[];
  survivors: string[];
}

/** A canary secret: random characters around a unique core, so that a partial leak shows too. */
function canary(random: Random, index: number, alphabet: readonly string[]): string {
  const around = (n: number): string => Array.from({ length: n }, () => pick(random, alphabet)).join('');
  const core = `K${index}q${alnum(random, 6, true)}`;
  const secret = `${random() < 0.4 ? '-' : ''}${around(Math.floor(random() * 6))}${core}${around(Math.floor(random() * 6))}`;
  return secret.includes('://') ? canary(random, index, alphabet) : secret;
}

const SECRET_WORDS = [
  ['password'],
  ['passwd'],
  ['pwd'],
  ['pass'],
  ['secret'],
  ['token'],
  ['jwt'],
  ['bearer'],
  ['auth'],
  ['authorization'],
  ['credential'],
  ['credentials'],
  ['cookie'],
  ['session'],
  ['api', 'key'],
  ['access', 'key'],
  ['private', 'key'],
  ['client', 'secret'],
  ['signature'],
  ['dsn'],
  ['connection', 'string'],
  ['session', 'id'],
];
const PREFIXES = [[], [], ['db'], ['mysql'], ['aws'], ['app'], ['x'], ['my', 'service']];

/** A secret-looking name, in any of the spellings hosts use. */
function secretName(random: Random): string {
  const words = [...pick(random, PREFIXES), ...pick(random, SECRET_WORDS)];
  const capital = (w: string): string => w[0]!.toUpperCase() + w.slice(1);
  switch (pick(random, ['kebab', 'snake', 'dot', 'colon', 'camel', 'upper', 'joined', 'pascal'])) {
    case 'kebab':
      return words.join('-');
    case 'snake':
      return words.join('_');
    case 'dot':
      return words.join('.');
    case 'colon':
      return words.join(':');
    case 'camel':
      return words[0]! + words.slice(1).map(capital).join('');
    case 'upper':
      return words.join('_').toUpperCase();
    case 'joined':
      return words.join('');
    default:
      return words.map(capital).join('');
  }
}

/** One secret in one shape, with the ordinary values around it that must survive. */
function secretShape(random: Random, i: number): Command {
  const name = secretName(random);
  const dash = pick(random, ['--', '--', '-']);
  const wide = canary(random, i, WIDE);
  const s = canary(random, i, NARROW);
  const ok = `ok${i}v${alnum(random, 5, true)}`;
  // A Cookie or Authorization value runs to the end of its line: nothing after it survives.
  const after = (survivors: string[]): string[] => (/cookie|authoriz/i.test(name) ? [] : survivors);
  const shapes: Array<() => Command> = [
    () => ({ args: [`${dash}${name}=${wide}`], secrets: [wide], survivors: [] }),
    () => ({ args: [`${dash}${name}`, wide], secrets: [wide], survivors: [] }),
    () => ({ args: [`${name.replace(/[-.:]/g, '_').toUpperCase()}=${wide}`], secrets: [wide], survivors: [] }),
    () => ({ args: [`-D${name}=${wide}`], secrets: [wide], survivors: [] }),
    () => ({ args: ['--set', `${name}=${wide}`], secrets: [wide], survivors: [] }),
    () => ({ args: [`--set=${name}=${s},replicas=${ok}`], secrets: [s], survivors: after([`replicas=${ok}`]) }),
    () => ({
      args: ['--conninfo', `host=h${ok} ${name}=${s} dbname=${ok}`],
      secrets: [s],
      survivors: [`host=h${ok} `, ...after([` dbname=${ok}`])],
    }),
    () => ({ args: ['--header', `${name}: ${wide.replace(/[\r\n]/g, '')}`], secrets: [wide.replace(/[\r\n]/g, '')], survivors: [] }),
    () => ({ args: [`--config={"${name}":"${s}","user":"${ok}"}`], secrets: [s], survivors: [`"user":"${ok}"`] }),
    () => ({ args: [`--callback=https://h${ok}.example/cb?${name}=${s}&page=${ok}`], secrets: [s], survivors: after([`&page=${ok}`]) }),
    () => ({ args: [`--db-url=postgres://app:${s}@h${ok}.internal:5432/${ok}`], secrets: [s], survivors: [`@h${ok}.internal:5432/${ok}`] }),
    () => ({ args: [`DATABASE_URL=mysql://${s}@h${ok}/db`], secrets: [s], survivors: [`@h${ok}/db`] }),
    () => ({ args: [`--upstream=https://:${s}@h${ok}.example`], secrets: [s], survivors: [`@h${ok}.example`] }),
    () => ({ args: [`--mysql=root:${s}@tcp(h${ok}:3306)/db`], secrets: [s], survivors: [`@tcp(h${ok}:3306)/db`] }),
    () => ({
      args: [
        '-H',
        `${pick(random, ['Authorization', 'Proxy-Authorization', 'X-Custom'])}: ${pick(random, ['Bearer', 'Basic', 'bearer'])} ${s}`,
      ],
      secrets: [s],
      survivors: [],
    }),
    () => ({ args: ['-H', 'Authorization:', 'Bearer', wide], secrets: [wide], survivors: [] }),
    () => ({ args: [`-p${wide}`], secrets: [wide], survivors: [] }),
    () => ({ args: ['-p', wide], secrets: [wide], survivors: [] }),
    // `user:pw@…` reads as a URL's userinfo, user included.
    () => ({ args: [pick(random, ['-u', '--user']), `${ok}:${wide}`], secrets: [wide], survivors: wide.includes('@') ? [] : [`${ok}:`] }),
    () => ({ args: [`--node-options=--port=${ok} ${dash}${name} ${s}`], secrets: [s], survivors: [`--port=${ok}`] }),
    () => ({ args: ['-e', `const ${name.replace(/[-.:]/g, '_')} = '${s}'; start(${ok})`], secrets: [s], survivors: [`start(${ok})`] }),
  ];
  return pick(random, shapes)();
}

/** An ordinary argument (or two) whose text must come back unchanged. */
function ordinary(random: Random, i: number): string[] {
  const ok = `ok${i}w${alnum(random, 5, true)}`;
  return pick(random, [
    [`--port=${ok}`],
    ['--name', ok],
    ['--verbose'],
    [`--passes=${ok}`],
    [`--keyboard=${ok}`],
    [`--author=${ok}`],
    [`file-${ok}.txt`],
    [`https://h${ok}.example/path?page=${ok}`],
    [`--max-old-space-size=${ok}`],
    [`replicas=${ok}`],
    [`git@h${ok}.example:org/repo.git`],
  ]);
}

function command(random: Random): Command {
  const out: Command = { args: ['/usr/bin/node', 'dist/main.js'], secrets: [], survivors: [] };
  const units = 1 + Math.floor(random() * 8);
  for (let i = 0; i < units; i++) {
    if (random() < 0.6) {
      const shape = secretShape(random, i);
      out.args.push(...shape.args);
      out.secrets.push(...shape.secrets);
      out.survivors.push(...shape.survivors);
      // A canary that reads as a secret flag (`-xKey`) rightly hides the argument after it: a
      // buffer takes that place, so that the ordinary argument after it must survive.
      out.args.push('--buffer');
    } else {
      const args = ordinary(random, i);
      out.args.push(...args);
      out.survivors.push(...args);
    }
  }
  return out;
}

const SEEDS = Array.from({ length: 400 }, (_, i) => 1000 + i);

describe('cmdline redaction, fuzzed', () => {
  it.each(SEEDS)('seed %i: no canary is served, every ordinary value is, one entry per argument', (seed) => {
    const { args, secrets, survivors } = command(prng(seed));
    const served = redactedArgs(args);
    const body = served.join('\0');
    const context = `seed ${seed}: ${JSON.stringify(args)}\n -> ${JSON.stringify(served)}`;
    expect({ context, entries: served.length }).toEqual({ context, entries: args.length });
    for (const secret of secrets) {
      const core = /K\d+q[qvz0-9]{6}/.exec(secret)![0];
      expect({ context, leaked: body.includes(secret) || body.includes(core) ? secret : undefined }).toEqual({
        context,
        leaked: undefined,
      });
    }
    for (const survivor of survivors) {
      expect({ context, lost: body.includes(survivor) ? undefined : survivor }).toEqual({ context, lost: undefined });
    }
  });
});
