/**
 * Go's `/debug/pprof/cmdline` on Node.js: the command line, NUL-separated as Go writes `os.Args`:
 * the Node binary, its own flags (`process.execArgv`: `--require`, `--env-file`, `-e` code), the
 * script and its arguments, read afresh on every request (a host may change `process.argv` at run
 * time, and nothing derived from it is kept).
 *
 * Secrets are served as `[REDACTED]`, found by the name they follow and by what they look like:
 *
 * 1. **Secret-named flags and pairs.** A name holding a word of the password / passwd / pwd /
 *    pass / secret / token / jwt / bearer / auth / authorization / credential(s) / cookie /
 *    session / key (api, access, private, master…) / signature / sig / dsn / connection-string
 *    family, in any case, separator style or position (`--db-password`, `--db:password`,
 *    `-Dspark.auth.secret`, `--dbPassword`, `MYSQL_PWD`, `X-Amz-Signature`; `isSecretName` in
 *    lib/util/secret-shapes.ts decides). `name=value` hides everything after the first `=`. A
 *    flag without `=` (`--token`, `-password`) hides the whole next argument, whatever it looks
 *    like (`-S3CRET`, `--x=y`), and a hidden argument that is itself such a flag hides the one
 *    after it too. Negations (`--no-auth`) take no value.
 * 2. **`-p`**, as MySQL's and others' password flag: `-p VALUE` hides the next argument and
 *    `-pVALUE` what follows `-p`. A Go-style `-port=8080` is hidden too: the flag cannot be told
 *    from `-p` plus a password. **`-u user:password`** and `--user user:password` (curl) hide
 *    what follows the first `:`.
 * 3. **Values by shape, anywhere in any argument** ({@link secretSpans}): the userinfo of every
 *    URL, user included (`postgres://[REDACTED]@host/db`, because a token is often the user:
 *    `https://TOKEN@github.com`), `user:pw@host` without a scheme, credentials after `Bearer` and
 *    `Basic`, and the value of every secret-named pair inside an argument: `--set=password=x`,
 *    `?token=x&page=2`, `Authorization: …` and `Cookie: …` to the end of the line,
 *    `{"password":"x"}`, `host=h password=x dbname=d`.
 * 4. **Command lines inside an argument** (`--node-options=--token x`, `-e "… --password x"`,
 *    `--opts="--auth-token x"`) get rules 1 and 2 word by word; an argument that ends in
 *    `Authorization:` or `Bearer` hides the next one.
 *
 * Names are matched generously: `--session-timeout=30` and `--key-file=/path` are hidden too, and
 * a boolean flag with a secret name (`--use-token-auth`) hides the argument after it. Ordinary
 * flags (`--port=8080`, `--passes=3`, `--keyboard=us`, `--author=x`, `--verbose`) are kept. The
 * answer keeps one entry per argument; an argument holding a NUL (possible only through a
 * changed `process.argv`) is split where Go's reader would split it, before redaction. An
 * argument longer than {@link MAX_READ_ARGUMENT} is not read: it and the one after it are served
 * as `[REDACTED]`. Not recognised: a secret with nothing secret-looking around it (a positional
 * `login S3CRET`), look-alike letters from other scripts (`pаssword` with a Cyrillic `а`), secrets
 * in a URL's path (`/services/T0/B0/XXXX`), and parts of a URL or `user:pw@host` password holding
 * whitespace (invalid in a URL; the part after the space is shown).
 */
import { REDACTED } from '../state/redaction';
import { cooperativeTicker } from '../util/cooperative';
import { commandLineWords, endsBeforeSecret, maskSpans, secretNameMemo, secretSpans, type SecretSpan } from '../util/secret-shapes';

/** Decides whether a name is secret (one {@link secretNameMemo} per command line). */
type SecretName = (name: string) => boolean;

/** What a flag says about the next argument: all of it is secret, or what follows its first `:`. */
type Pending = 'whole' | 'password' | undefined;

/** A name as flags and environment variables are spelled: no spaces, quotes, brackets or URL punctuation. */
const FLAG_LIKE = /^[^\s"'`<>(){}[\]/?&#,;]+$/u;

/** `--user`, `--proxy-user`, `-user`: curl's `user:password`. */
function isUserFlag(name: string): boolean {
  return /(?:^|[^a-z])user$/i.test(name) || /User$/.test(name);
}

/** Hides what follows the first `:` at or after `from` (the password of `user:password`). */
function addAfterColon(arg: string, from: number, add: (span: SecretSpan) => void): void {
  const colon = arg.indexOf(':', from);
  if (colon >= 0) add({ start: colon + 1, end: arg.length });
}

/** Rules 1 and 2 for the flag that starts at `from` and whose `=` (if any) is at `eq`. */
function flagRules(arg: string, from: number, eq: number, add: (span: SecretSpan) => void, isSecret: SecretName): Pending {
  const name = arg.slice(from, eq >= 0 ? eq : arg.length);
  let pending: Pending;
  if (name === '-p' && eq < 0) pending = 'whole';
  else if (name.startsWith('-p')) add({ start: from + 2, end: arg.length });
  if (name === '-u' && eq < 0) pending = 'password';
  else if (name.startsWith('-u') && eq < 0) addAfterColon(arg, from + 2, add);
  if (name === '' || !FLAG_LIKE.test(name)) return pending;
  if (isSecret(name)) {
    if (eq >= 0) add({ start: eq + 1, end: arg.length });
    else if (name.startsWith('-') && !name.startsWith('--no-')) pending = 'whole';
  } else if (name.startsWith('-') && isUserFlag(name)) {
    if (eq >= 0) addAfterColon(arg, eq + 1, add);
    else pending = 'password';
  }
  return pending;
}

/** The spans rules 1 and 2 hide in one argument, and what they say about the next one. */
function argumentRules(arg: string, add: (span: SecretSpan) => void, isSecret: SecretName): Pending {
  let pending: Pending;
  // `--node-options=--token`: a flag as another flag's value is a flag too.
  for (let from = 0; from >= 0;) {
    const eq = arg.indexOf('=', from);
    pending = flagRules(arg, from, eq, add, isSecret) ?? pending;
    from = eq >= 0 && arg[eq + 1] === '-' ? eq + 1 : -1;
  }
  return endsBeforeSecret(arg, isSecret) ? 'whole' : pending;
}

/** Carries what each argument of a list says about the next one along the list. */
function argvWalker(isSecret: SecretName): (arg: string, add: (span: SecretSpan) => void) => void {
  let pending: Pending;
  return (arg, add) => {
    if (pending === 'whole') add({ start: 0, end: arg.length });
    else if (pending === 'password') addAfterColon(arg, 0, add);
    pending = argumentRules(arg, add, isSecret);
  };
}

/**
 * The longest argument read: a longer one (an `-e` script, a large JSON configuration) is served
 * whole as `[REDACTED]`, and so is the one after it, since it may have ended in `--token`. Bounds
 * what one argument costs between two yields to the event loop: under 1 ms of hostile text once
 * compiled; for the first request of a process, before V8 has optimised the scans, the longest
 * turn measured about 50 ms of CPU on a loaded 2-core machine, against 110 ms at 16 KiB.
 */
export const MAX_READ_ARGUMENT = 4 * 1024;

/** One argument's spans: its shapes, rule 4 inside it, and the walk along the command line. */
function argumentSpans(arg: string, walk: ReturnType<typeof argvWalker>, isSecret: SecretName): SecretSpan[] {
  const spans = secretSpans(arg, isSecret);
  const add = (span: SecretSpan): void => void spans.push(span);
  walk(arg, add);
  for (const words of commandLineWords(arg)) {
    if (words.length < 2) continue;
    const inner = argvWalker(isSecret);
    for (const word of words) {
      inner(arg.slice(word.start, word.end), (span) => add({ start: word.start + span.start, end: word.start + span.end }));
    }
  }
  return spans;
}

/** The redacted arguments, one per step, so that a caller can yield between them. */
function* redactionSteps(args: readonly string[]): Generator<string> {
  const isSecret = secretNameMemo();
  const walk = argvWalker(isSecret);
  const ignore = (): void => undefined;
  let afterLong = false;
  for (const arg of args.flatMap((a) => (a.includes('\0') ? a.split('\0') : [a]))) {
    if (arg.length > MAX_READ_ARGUMENT) {
      // An empty argument says nothing about the next: what came before stops here.
      walk('', ignore);
      afterLong = true;
      yield REDACTED;
    } else if (afterLong) {
      // Hidden whole, but read for what it says about the next one (`<long> --token S3CRET`).
      walk(arg, ignore);
      afterLong = false;
      yield REDACTED;
    } else {
      yield maskSpans(arg, argumentSpans(arg, walk, isSecret), REDACTED);
    }
  }
}

/** The arguments with secrets replaced by `[REDACTED]` (the module's description gives the rules). */
export function redactedArgs(args: readonly string[]): string[] {
  return [...redactionSteps(args)];
}

/** Each entry as text: a host may have put anything into `process.argv`. */
function textsOf(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((item: unknown) => {
    if (typeof item === 'string') return item;
    try {
      return String(item);
    } catch {
      return REDACTED;
    }
  });
}

/**
 * The body of `/debug/pprof/cmdline`, from the command line as it is now, yielding to the event
 * loop between arguments once a turn has lasted a few milliseconds.
 */
export async function commandLine(): Promise<string> {
  const tick = cooperativeTicker(5, 1);
  const out: string[] = [];
  for (const arg of redactionSteps([process.execPath, ...textsOf(process.execArgv), ...textsOf(process.argv).slice(1)])) {
    out.push(arg);
    const pause = tick();
    if (pause) await pause;
  }
  return out.join('\0');
}

/** Why `/debug/pprof/symbol` has no Node.js meaning (answered with a 404). */
export const SYMBOL_NOT_APPLICABLE =
  "no symbol lookup on Node.js: Go's /debug/pprof/symbol maps program counters to Go function names, but every profile served here already names its JavaScript functions, files and lines, so go tool pprof needs no lookup";
