/**
 * The console's copied commands, run through real shells: dash (`sh`), bash, and bash reading
 * them interactively as a paste would (history expansion of `!` on). `kubectl` and `curl` are
 * shell functions that print their arguments, so the test sees exactly what the programs would
 * get: `$NAMESPACE` and `$POD` expanded (as one word each), everything else literal. Then the
 * commands run for real against a server on a socket: curl itself, and the path kubectl would
 * ask the API server to proxy.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { curlCommand, kubectlCommand } from '../../console-page/views/commands';
import { createIntrospectionState } from '../../lib/state/store';
import { closeIntrospectionApps, introspectionApp } from '../helpers/introspection-app';
import { closeAllListening, listen, request } from '../helpers/http';

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'console-commands-'));
/** A file the injection attempts below would create if any of them ran. */
const PWNED = path.join(scratch, 'pwned');

afterAll(async () => {
  await closeAllListening();
  await closeIntrospectionApps();
  fs.rmSync(scratch, { recursive: true, force: true });
});

/** Templates a user may type, and text an attacker would like a shell to run. */
const FIELDS = [
  '{.version}',
  '{$.config}',
  "{.items[?(@.name=='a b')].value}",
  '{.items[?(@.name=="x")].value}',
  '{range .items[*]}{.name}{"\\n"}{end}',
  `'; touch ${PWNED} #`,
  `$(touch ${PWNED})`,
  `\`touch ${PWNED}\``,
  `"; touch ${PWNED}; "`,
  '!!',
  '!$',
  '!-1',
  '!touch',
  'a  b\tc',
  '\\',
  "\\\\'",
  '"',
  "'",
  "''",
  "$'x'",
  '$NAMESPACE ${POD} $0 $@ $*',
  '* ? [a-z] ~root {a,b}',
  '&;|<>#()',
  'é😀\u2028',
  '%41%00',
  'line\nbreak',
  '',
];

/** Mount prefixes and variable names as the browser leaves them in a path (`'`, `!`, `$`, `(`, `[` stay raw). */
const PREFIXES = ['', "/o'p$s!", '/a(b)', '/[x]', '/~u;v=1,w'];
const NAMES = ['config', "it's", 'a!b', '$(x)'];

const ENV = { NAMESPACE: 'kube system*', POD: 'pod-0 $(touch x) `y`' };

/** The path and query the server sees, built as the page builds it (URL API). */
function pagePath(prefix: string, name: string, field: string, output: string): string {
  const url = new URL(`vars/${encodeURIComponent(name)}`, `http://127.0.0.1:8080${prefix}/debug/`);
  if (field !== '') url.searchParams.set('field', field);
  if (output === 'text') url.searchParams.set('output', 'text');
  return url.pathname + url.search;
}

type Shell = (script: string) => string;

const STUBS = `kubectl() { printf '%s\\0' "$@"; }\ncurl() { printf '%s\\0' "$@"; }\n`;
const SHELLS: Array<[string, Shell]> = [
  ['sh', (script) => execFileSync('sh', ['-c', STUBS + script], { env: { ...process.env, ...ENV }, encoding: 'utf8' })],
  ['bash', (script) => execFileSync('bash', ['-c', STUBS + script], { env: { ...process.env, ...ENV }, encoding: 'utf8' })],
  [
    'bash, pasted interactively',
    (script) => {
      const run = spawnSync('bash', ['--norc', '--noprofile', '-i'], {
        input: `${STUBS}${script}\nexit\n`,
        env: { ...process.env, ...ENV, HISTFILE: '/dev/null' },
        encoding: 'utf8',
      });
      return run.stdout;
    },
  ],
];

function argv(output: string): string[] {
  expect(output.endsWith('\0')).toBe(true);
  return output.slice(0, -1).split('\0');
}

describe.each(SHELLS)('copied commands through %s', (_shell, shell) => {
  it('kubectl get --raw: $NAMESPACE and $POD expand, the path and query reach kubectl verbatim', () => {
    const cases = PREFIXES.flatMap((prefix) => NAMES.flatMap((name) => FIELDS.map((field) => pagePath(prefix, name, field, 'text'))));
    // The quoting must hold for any text, not only for what URL encoding leaves.
    cases.push(...FIELDS.map((field) => `/debug/vars/x?field=${field}`));
    const script = cases.map((p) => kubectlCommand(p, '8080')).join('\n');
    const out = argv(shell(script));
    // A control character the page never leaves in a URL is percent-encoded, as the URL would have it.
    const encoded = (p: string): string => p.replace(/[\u0000-\u001f\u007f]/g, (c) => encodeURIComponent(c));
    const expected = cases.flatMap((p) => ['get', '--raw', `/api/v1/namespaces/${ENV.NAMESPACE}/pods/${ENV.POD}:8080/proxy${encoded(p)}`]);
    expect(out).toEqual(expected);
    expect(fs.existsSync(PWNED)).toBe(false);
  });

  it('curl: the URL and the template reach curl verbatim (URL-encoded when it holds a control character), with -g', () => {
    const urls = PREFIXES.flatMap((prefix) => NAMES.map((name) => `http://127.0.0.1:8080${pagePath(prefix, name, '', '')}`));
    const cases = urls.flatMap((url) =>
      FIELDS.flatMap((field) => [
        { url, field, output: 'json' },
        { url, field, output: 'text' },
      ]),
    );
    const out = argv(shell(cases.map((c) => curlCommand(c.url, c.field, c.output)).join('\n')));
    const expected = cases.flatMap((c) => [
      '-gsG',
      c.url,
      ...(c.field === ''
        ? []
        : /[\u0000-\u001f\u007f]/.test(c.field)
          ? ['--data', new URLSearchParams({ field: c.field }).toString()]
          : ['--data-urlencode', `field=${c.field}`]),
      ...(c.output === 'text' ? ['--data-urlencode', 'output=text'] : []),
    ]);
    expect(out).toEqual(expected);
    expect(fs.existsSync(PWNED)).toBe(false);
  });
});

describe('copied commands against a real server', () => {
  it('curl gets what the page gets, and kubectl asks the proxy for the path the page reads', async () => {
    const state = createIntrospectionState();
    state.setConfig({ templates: {}, watched_resources: [] }, '1');
    const items = [
      { name: 'a b', value: "it's $HOME `x` !!" },
      { name: "o'k", value: 'two' },
      { name: 'x', value: '{"json": [1]}' },
    ];
    state.publishVar('my.var-1', () => ({ items }));
    const app = introspectionApp(state, { console: false });
    const { origin } = await listen(app);
    const fields = [
      "{.items[?(@.name=='a b')].value}",
      '{.items[?(@.name=="o\'k")].value}',
      '{range .items[*]}{.name}={.value};{end}',
      '{.items[2]}',
      '{.items[0].name}\t{.items[1].name}',
    ];
    for (const field of fields) {
      for (const output of ['json', 'text']) {
        const page = pagePath('', 'my.var-1', field, output);
        const served = await request(`${origin}${page}`);
        expect({ field, output, status: served.status }).toEqual({ field, output, status: 200 });
        const url = `${origin}${pagePath('', 'my.var-1', '', '')}`;
        // Asynchronously: the server answering curl runs in this process.
        const viaCurl = await promisify(execFile)('sh', ['-c', curlCommand(url, field, output)], { encoding: 'utf8', timeout: 10_000 });
        expect(viaCurl.stdout).toBe(served.text);
        const kubectlArgs = argv(
          execFileSync('sh', ['-c', STUBS + kubectlCommand(page, '8080')], { env: { ...process.env, ...ENV }, encoding: 'utf8' }),
        );
        const proxied = kubectlArgs[2]!.slice(`/api/v1/namespaces/${ENV.NAMESPACE}/pods/${ENV.POD}:8080/proxy`.length);
        expect((await request(`${origin}${proxied}`)).text).toBe(served.text);
      }
    }
  });
});
