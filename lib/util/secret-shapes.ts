/**
 * Secrets recognised in free text by what they look like, for text this package serves but does
 * not own (the command line, today). Two questions are answered here and nowhere else:
 *
 * - {@link isSecretName}: does a name (`--db-password`, `MYSQL_PWD`, `X-Amz-Signature`,
 *   `spark.hadoop.fs.s3a.secret.key`, `dbPassword`) say that its value is a secret?
 * - {@link secretSpans}: which parts of a text are secrets, by shape: the userinfo of a URL
 *   (`postgres://user:pw@host`, `https://TOKEN@host`, scheme-less `user:pw@tcp(host)`), the
 *   credentials after `Bearer` / `Basic`, and the value of every secret-named pair inside the
 *   text, whatever its syntax: `password=x`, `?token=x&`, `Authorization: …`, `Cookie: …`,
 *   `{"password":"x"}`, `password => 'x'`, `token:= x`.
 *
 * The matching is generous on purpose: a value shown by mistake cannot be taken back, a value
 * hidden by mistake costs a debugging minute. Every scan is linear in the text's length (no
 * regular expression here can backtrack over a run it has already read), so a megabyte of hostile
 * text costs milliseconds, not minutes.
 */

/** A half-open range `[start, end)` of a string (UTF-16 indices) that holds a secret. */
export interface SecretSpan {
  /** Index of the first character of the secret. */
  readonly start: number;
  /** Index just past the secret. */
  readonly end: number;
}

// Found anywhere in a name once its words are joined: `db_password`, `pass-word`, `x-api-key`, `ConnectionStrings__Default`.
const SECRET_INFIXES = [
  'password',
  'passwd',
  'passphrase',
  'passcode',
  'passwort',
  'kennwort',
  'motdepasse',
  'contrasena',
  'contraseña',
  'senha',
  'пароль',
  '密码',
  'パスワード',
  '비밀번호',
  'secret',
  'token',
  'credential',
  'cookie',
  'bearer',
  'jwt',
  'signature',
  'authorization',
  'authenticat',
  'apikey',
  'accesskey',
  'privatekey',
  'connectionstring',
  'connstring',
  'connstr',
  'sessionid',
  'csrf',
  'xsrf',
];
// Secret only as a whole word: inside a longer word they are ordinary (`pat`h, `pin`g, `sig`nal).
const SECRET_WORDS = new Set([
  'pass',
  'pw',
  'pword',
  'pswd',
  'psw',
  'sig',
  'otp',
  'totp',
  'mfa',
  'pat',
  'pin',
  'cred',
  'hmac',
  'session',
  'sessions',
  'sid',
]);
// Secret as the end of a word, for names written in one word: `dbpass`, `mysqlpwd`, `masterkey`, `basicauth`, `sentrydsn`.
const SECRET_SUFFIXES = ['pass', 'pwd', 'pw', 'key', 'keys', 'auth', 'authn', 'authz', 'dsn', 'creds', 'session'];
// Ordinary words the rules above would catch; dropped before matching.
const ORDINARY_WORDS = new Set([
  'bypass',
  'compass',
  'encompass',
  'surpass',
  'trespass',
  'overpass',
  'underpass',
  'hotkey',
  'turnkey',
  'monkey',
  'donkey',
  'turkey',
  'hockey',
  'jockey',
  'whiskey',
  'tokenize',
  'tokenizer',
  'tokenizers',
  'tokenized',
  'tokenization',
]);

// Every fragment the rules below look for, tested first against the letters and digits of a
// name, so that most names (`--port`, `--max-old-space-size`) are settled by one test.
const CANDIDATE = new RegExp(
  ['pass', 'pw', 'psw', 'sig', 'otp', 'mfa', 'pat', 'pin', 'cred', 'hmac', 'session', 'sid', 'key', 'auth', 'dsn', ...SECRET_INFIXES].join(
    '|',
  ),
  'u',
);

// Characters that NFKC may turn into ASCII letters or that hide inside words (format characters,
// combining marks): a name holding one is normalised before it is read.
const NEEDS_NFKC =
  /[\p{Cf}\p{M}\u017f\u1d00-\u1dbf\u2070-\u218f\u2460-\u24ff\u3200-\u33ff\ufb00-\ufb4f\ufe00-\ufe6f\uff00-\uffef\u{1d400}-\u{1d7ff}\u{1f100}-\u{1f1ff}]/u;

const ASCII_ONLY = /^[\x00-\x7f]*$/;

function isUpper(code: number): boolean {
  return code >= 65 && code <= 90;
}

function isLower(code: number): boolean {
  return code >= 97 && code <= 122;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** {@link nameWords} for an ASCII name, by hand: the regular expressions cost microseconds a name. */
function asciiWords(name: string): string[] {
  const lower = name.toLowerCase();
  const words: string[] = [];
  let start = 0;
  for (let i = 0; i <= name.length; i++) {
    const code = i < name.length ? name.charCodeAt(i) : 0;
    const prev = i > 0 ? name.charCodeAt(i - 1) : 0;
    const letter = isUpper(code) || isLower(code);
    if (!letter && !isDigit(code)) {
      if (i > start) words.push(lower.slice(start, i));
      start = i + 1;
    } else if (
      i > start &&
      ((isUpper(code) && (isLower(prev) || (isUpper(prev) && isLower(name.charCodeAt(i + 1))))) ||
        (letter && isDigit(prev)) ||
        (isDigit(code) && !isDigit(prev)))
    ) {
      words.push(lower.slice(start, i));
      start = i;
    }
  }
  return words;
}

/**
 * The lower-case words of a name (normalised as {@link isSecretName} says): split at anything not
 * a letter or digit, at camelCase humps and between letters and digits.
 */
function nameWords(name: string): string[] {
  const words = ASCII_ONLY.test(name)
    ? asciiWords(name)
    : name
        .replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2')
        .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
        .replace(/(\p{L})(\p{N})/gu, '$1 $2')
        .replace(/(\p{N})(\p{L})/gu, '$1 $2')
        .toLowerCase()
        .split(/[^\p{L}\p{M}\p{N}]+/u);
  return words.filter((word) => word !== '' && !ORDINARY_WORDS.has(word));
}

function isSecretWord(word: string): boolean {
  if (SECRET_WORDS.has(word) || SECRET_SUFFIXES.some((suffix) => word.endsWith(suffix))) return true;
  if (word.startsWith('passw') || word.startsWith('pwd')) return true;
  // `auth`, `authn`, `authToken`, `authorization`, `authorize`; not `author`, `authority`.
  return word.startsWith('auth') && (!word.startsWith('author') || /^authori[sz]/.test(word));
}

/**
 * Whether a name says its value is a secret: it holds a word of the password / secret / token /
 * credential / key / auth / cookie / session / signature / DSN family, in any case, any separator
 * style (`--a.b:password`, `MYSQL_PWD`, `dbPassword`, `X-Api-Key`) and any position. Leading
 * dashes and other punctuation are ignored. Generous: `--session-timeout` and `--key-file` count.
 */
export function isSecretName(name: string): boolean {
  if (!NEEDS_NFKC.test(name)) return isSecretSpelling(name);
  // NFKC reads full-width and other look-alike letters as ASCII; format characters (zero-width
  // spaces, soft hyphens) are dropped so that `pass\u200Bword` is one word; and without its
  // accents (`pa\u0301ssword`), a name is read a second time.
  const clean = name.normalize('NFKC').replace(/\p{Cf}/gu, '');
  const bare = clean.normalize('NFKD').replace(/\p{M}/gu, '').normalize('NFC');
  return isSecretSpelling(clean) || (bare !== clean && isSecretSpelling(bare));
}

function isSecretSpelling(name: string): boolean {
  const ascii = ASCII_ONLY.test(name);
  if (!CANDIDATE.test(name.toLowerCase().replace(ascii ? /[^a-z0-9]+/g : /[^\p{L}\p{M}\p{N}]+/gu, ''))) return false;
  const words = nameWords(name);
  if (words.length === 0) return false;
  const joined = words.join('');
  return SECRET_INFIXES.some((infix) => joined.includes(infix)) || words.some(isSecretWord);
}

/** Answers of {@link isSecretName} one scan keeps: names repeat (a flag per word, a header per line). */
const MEMO_ENTRIES = 4096;

/**
 * {@link isSecretName} remembering its answers, for one scan of one text or command line: created
 * and dropped with the scan, so no name (a secret, perhaps, taken for a flag) outlives it.
 */
export function secretNameMemo(): (name: string) => boolean {
  const known = new Map<string, boolean>();
  return (name) => {
    let secret = known.get(name);
    if (secret === undefined) {
      secret = isSecretName(name);
      if (known.size < MEMO_ENTRIES) known.set(name, secret);
    }
    return secret;
  };
}

const NAME_CHAR = /[\p{L}\p{M}\p{N}\p{Cf}_.-]/u;
const WHITESPACE = /\s/;

/** Whether the character at `p` may be part of a name (letters, marks, digits, format characters, `_ . -`). */
function isNameAt(text: string, p: number): boolean {
  const code = text.charCodeAt(p);
  if (code < 128) return isLower(code) || isUpper(code) || isDigit(code) || code === 95 || code === 46 || code === 45;
  return NAME_CHAR.test(text[p]!);
}

/** Whether the character at `p` is whitespace (`false` past the end). */
function isSpaceAt(text: string, p: number): boolean {
  const code = text.charCodeAt(p);
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return WHITESPACE.test(text[p]!);
}

function isQuoteAt(text: string, p: number): boolean {
  const code = text.charCodeAt(p);
  return code === 34 || code === 39 || code === 96;
}

function isBlank(c: string | undefined): boolean {
  return c === ' ' || c === '\t';
}

/** Index of the first newline at or after `from`, or the text's end: where a header's value ends. */
function lineEnd(text: string, from: number): number {
  for (let p = from; p < text.length; p++) if (text[p] === '\n' || text[p] === '\r') return p;
  return text.length;
}

/** The inside of the quoted string opening at `open`; unterminated, the rest of the text. */
function quotedSpan(text: string, open: number): SecretSpan {
  const quote = text[open];
  for (let p = open + 1; p < text.length; p++) {
    if (text[p] === '\\') p++;
    else if (text[p] === quote) return { start: open + 1, end: p };
  }
  return { start: open + 1, end: text.length };
}

/** The bracketed value opening at `open` (`{…}` or `[…]`, brackets included); unbalanced, the rest of the text. */
function bracketedSpan(text: string, open: number): SecretSpan {
  let depth = 0;
  for (let p = open; p < text.length; p++) {
    const c = text[p]!;
    if (c === '"' || c === "'") p = quotedSpan(text, p).end;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) return { start: open, end: p + 1 };
  }
  return { start: open, end: text.length };
}

/** End of the name run that starts at `from` (no characters of a name: `from`). */
function nameEnd(text: string, from: number): number {
  let p = from;
  while (p < text.length && isNameAt(text, p)) p++;
  return p;
}

function isPairBreakAt(text: string, p: number): boolean {
  const c = text[p];
  return c === ',' || c === ';' || c === '&' || isSpaceAt(text, p);
}

/**
 * Where an unquoted `name=value` value ends: before the next `, ; &` or whitespace that starts
 * another `name=` / `name:` pair (`password=x,replicas=3`, `?token=x&page=2`, libpq's
 * `password=x dbname=d`), else at the text's end, so a value holding `,` or spaces is hidden whole.
 */
function pairValueEnd(text: string, from: number): number {
  for (let p = from; p < text.length; p++) {
    if (!isPairBreakAt(text, p)) continue;
    let q = p;
    while (q < text.length && isPairBreakAt(text, q)) q++;
    if (isQuoteAt(text, q)) q++;
    const end = nameEnd(text, q);
    let r = end;
    if (isQuoteAt(text, r)) r++;
    while (isBlank(text[r])) r++;
    if (end > q && (text[r] === '=' || text[r] === ':')) return p;
    // Nothing between `p` and `end` can start a pair: go on from there.
    p = Math.max(p, end - 1);
  }
  return text.length;
}

/** Where an unquoted JSON scalar (`{"pin":1234,…}`) ends. */
function scalarEnd(text: string, from: number): number {
  let p = from;
  while (p < text.length && !',}]'.includes(text[p]!) && !isQuoteAt(text, p) && !isSpaceAt(text, p)) p++;
  return p;
}

/** The separator after a name. */
interface Separator {
  /** `=` (also `==`, `=>`) or `:` (also `:=`). */
  sep: '=' | ':';
  /** Index of the separator's first character. */
  at: number;
  /** Index of the value's first character, past blanks. */
  valueStart: number;
  /** Whether the name was quoted (`"pin":1234`, JSON): its unquoted value ends like a JSON scalar. */
  quotedName: boolean;
}

/** The `=` / `:` (also `=>`, `:=`, `==`) after a name, and where its value starts; `undefined` when none follows. */
function separatorAfter(text: string, start: number, end: number): Separator | undefined {
  const before = text[start - 1];
  const quotedName = isQuoteAt(text, start - 1);
  let p = end;
  if (isQuoteAt(text, p)) p++;
  while (isBlank(text[p])) p++;
  const sep = text[p];
  const at = p;
  if (sep !== '=' && sep !== ':') return undefined;
  // `https://…` is a scheme, and `//host:port` / `@host:port` an authority: no pair (`/token:x` is one).
  if (sep === ':' && (text.startsWith('//', p + 1) || before === '@' || (before === '/' && text[start - 2] === '/'))) return undefined;
  p++;
  while (text[p] === '=' || text[p] === '>') p++;
  while (isBlank(text[p])) p++;
  return { sep, at, valueStart: p, quotedName };
}

/**
 * `auth.example.com:8443`: a dotted name, `:` right before up to five digits, then the end, a path
 * or a query, and no secret word in its last label, is an address, not a pair. (A secret word ends
 * a configuration key, `spark.auth.secret:1234`, but starts a host name.)
 */
function isHostPort(text: string, name: string, colon: number, isSecret: (name: string) => boolean): boolean {
  const dot = name.lastIndexOf('.');
  if (dot < 0 || isSecret(name.slice(dot + 1))) return false;
  let p = colon + 1;
  while (p < text.length && p - colon <= 6 && isDigit(text.charCodeAt(p))) p++;
  return p > colon + 1 && p - colon <= 6 && (p === text.length || '/?#'.includes(text[p]!) || isSpaceAt(text, p));
}

/** The value of a secret-named pair whose separator is `found`. */
function pairValueSpan(text: string, name: string, found: Separator): SecretSpan {
  const { sep, valueStart: start, quotedName } = found;
  const first = text[start];
  if (isQuoteAt(text, start)) return quotedSpan(text, start);
  if (first === '{' || first === '[') return bracketedSpan(text, start);
  // A header's value (`Authorization: Basic …`, `Cookie: a=1; sid=2`) runs to the end of its line.
  if ((sep === ':' && !quotedName) || /cookie|authoriz/i.test(name)) return { start, end: lineEnd(text, start) };
  if (sep === ':') return { start, end: scalarEnd(text, start) };
  return { start, end: pairValueEnd(text, start) };
}

/**
 * Values of secret-named pairs anywhere in the text. A name may hold colons (`--db:password=`,
 * `session:id=`); one not followed by `=` or `:` reads as `name:value` at its first colon.
 */
function pairSpans(text: string, out: SecretSpan[], isSecret: (name: string) => boolean): void {
  const names = /[\p{L}\p{M}\p{N}\p{Cf}_.-]+(?::[\p{L}\p{M}\p{N}\p{Cf}_.-]+)*/gu;
  for (let match = names.exec(text); match !== null; match = names.exec(text)) {
    const start = match.index;
    const colon = match[0].indexOf(':');
    let name = match[0];
    let found = separatorAfter(text, start, start + name.length);
    if (!found && colon >= 0) {
      name = name.slice(0, colon);
      found = separatorAfter(text, start, start + colon);
    }
    if (!found || !isSecret(name) || (found.sep === ':' && !found.quotedName && isHostPort(text, name, found.at, isSecret))) {
      // The rest of a `name:rest` run may hold a pair of its own (`a:token:abc`).
      if (colon >= 0 && name !== match[0]) names.lastIndex = start + colon + 1;
      continue;
    }
    const span = pairValueSpan(text, name, found);
    if (span.end > span.start) {
      out.push(span);
      names.lastIndex = Math.max(names.lastIndex, span.end);
    }
  }
}

/** ASCII characters (as a lookup table) that end a URL or a `user:pw@host` token. */
function stopSet(chars: string): Uint8Array {
  const set = new Uint8Array(128);
  for (const c of chars) set[c.charCodeAt(0)] = 1;
  return set;
}

const URL_STOP = stopSet(' \t\n\r\f\v"\'`<>');
const TOKEN_STOP = stopSet(' \t\n\r\f\v"\'`<>(),;[]{}');

function isStopAt(set: Uint8Array, text: string, p: number): boolean {
  const code = text.charCodeAt(p);
  return code < 128 ? set[code] === 1 : WHITESPACE.test(text[p]!);
}

/** Start of the scheme that ends at `colon` (the `:` of `://`). */
function schemeStart(text: string, colon: number): number {
  let p = colon;
  while (p > 0) {
    const code = text.charCodeAt(p - 1);
    if (!isLower(code) && !isUpper(code) && !isDigit(code) && code !== 43 && code !== 46 && code !== 45) break;
    p--;
  }
  return p;
}

/**
 * Userinfo of `scheme://userinfo@host` URLs, the user included: a user may be the token itself
 * (`https://ghp_x@github.com`, `https://TOKEN:x-oauth-basic@…`). The authority runs to the last
 * `@` before whitespace, a quote or the next URL, so a password holding `@`, `/` or `:` is hidden
 * whole (a URL with `@` in its path loses its host too, the safe side).
 */
function urlUserinfoSpans(text: string, out: SecretSpan[]): void {
  for (let colon = text.indexOf('://'); colon >= 0;) {
    const start = colon + 3;
    let end = start;
    let next = -1;
    let at = -1;
    for (; end < text.length && !isStopAt(URL_STOP, text, end); end++) {
      if (text[end] === '@') at = end;
      else if (text[end] === ':' && text.startsWith('://', end)) {
        next = end;
        // No `@` is a scheme character, so `at` stays before the end.
        end = Math.max(start, schemeStart(text, end));
        break;
      }
    }
    if (at > start) out.push({ start, end: at });
    colon = next >= 0 ? next : text.indexOf('://', end);
  }
}

/**
 * `user:password@host` without a scheme (Go's MySQL DSN `user:pw@tcp(h:3306)/db`, `:pw@host`), one
 * token at a time, up to its last `@`, when a `:` comes before that `@`. The userinfo starts after
 * the token's first `=` if a `:` follows that `=` (`DSN=u:p@h`, `--db:password=u:p=q@h`), else at
 * the token's start. What follows a `://` in the token is the URL rule's.
 */
function bareUserinfoSpans(text: string, out: SecretSpan[]): void {
  let tokenStart = 0;
  let colon = -1;
  let at = -1;
  let equals = -1;
  let colonAfterEquals = -1;
  let inUrl = false;
  for (let p = 0; p <= text.length; p++) {
    if (p < text.length && !isStopAt(TOKEN_STOP, text, p)) {
      const c = text[p];
      if (inUrl) continue;
      if (c === '@') at = p;
      else if (c === ':' && text.startsWith('://', p)) inUrl = true;
      else if (c === ':') {
        if (colon < 0) colon = p;
        if (equals >= 0 && colonAfterEquals < 0) colonAfterEquals = p;
      } else if (c === '=' && equals < 0) equals = p;
      continue;
    }
    if (colonAfterEquals >= 0 && colonAfterEquals < at) out.push({ start: equals + 1, end: at });
    else if (colon >= 0 && colon < at) out.push({ start: tokenStart, end: at });
    tokenStart = p + 1;
    colon = at = equals = colonAfterEquals = -1;
    inUrl = false;
  }
}

/** Credentials after an HTTP auth scheme (`Bearer x`, `Basic x`), to the closing quote or the end of the line. */
function authSchemeSpans(text: string, out: SecretSpan[]): void {
  const schemes = /(?:bearer|basic)[ \t]+/gi;
  for (let match = schemes.exec(text); match !== null; match = schemes.exec(text)) {
    const start = match.index + match[0].length;
    // A word ending in the scheme's name (`x_bearer = …`) or followed by a separator is no scheme.
    if ((match.index > 0 && isNameAt(text, match.index - 1)) || text[start] === '=' || text[start] === ':') continue;
    const quoted = match.index > 0 && isQuoteAt(text, match.index - 1);
    const end = quoted ? closingQuote(text, start, text[match.index - 1]!) : lineEnd(text, start);
    if (end > start) {
      out.push({ start, end });
      schemes.lastIndex = Math.max(schemes.lastIndex, end);
    }
  }
}

/** Index of the first unescaped `quote` at or after `from`, or the text's end. */
function closingQuote(text: string, from: number, quote: string): number {
  for (let p = from; p < text.length; p++) {
    if (text[p] === '\\') p++;
    else if (text[p] === quote) return p;
  }
  return text.length;
}

/** Sorted, with overlapping and touching spans joined, so one marker replaces each secret. */
function mergeSpans(spans: readonly SecretSpan[]): SecretSpan[] {
  const sorted = spans.filter((s) => s.end > s.start).sort((a, b) => a.start - b.start);
  const merged: SecretSpan[] = [];
  for (const span of sorted) {
    const last = merged[merged.length - 1];
    if (last && span.start <= last.end) merged[merged.length - 1] = { start: last.start, end: Math.max(last.end, span.end) };
    else merged.push(span);
  }
  return merged;
}

/**
 * The parts of `text` that are secrets by their shape (see the module's description), sorted and
 * merged. The names and structure around them (`password=`, `postgres://`, `@host/db`) are kept.
 * `isSecret` decides names ({@link isSecretName}, or a {@link secretNameMemo} shared by a scan).
 */
export function secretSpans(text: string, isSecret: (name: string) => boolean = isSecretName): SecretSpan[] {
  const spans: SecretSpan[] = [];
  urlUserinfoSpans(text, spans);
  bareUserinfoSpans(text, spans);
  pairSpans(text, spans, isSecret);
  authSchemeSpans(text, spans);
  return mergeSpans(spans);
}

/**
 * Whether `text` ends where a secret should follow, so that the secret is the next argument of a
 * command line: a secret-named header with nothing after its colon (`Authorization:`) or an auth
 * scheme with no credentials yet (`… Bearer`).
 */
export function endsBeforeSecret(text: string, isSecret: (name: string) => boolean = isSecretName): boolean {
  let end = text.length;
  while (end > 0 && isSpaceAt(text, end - 1)) end--;
  const last = text[end - 1];
  if (last === 'r' || last === 'R' || last === 'c' || last === 'C') {
    const word = /(?:bearer|basic)$/i.exec(text.slice(Math.max(0, end - 6), end));
    return word !== null && (end - word[0].length === 0 || !isNameAt(text, end - word[0].length - 1));
  }
  if (last !== ':') return false;
  end--;
  while (isBlank(text[end - 1])) end--;
  if (isQuoteAt(text, end - 1)) end--;
  let start = end;
  while (start > 0 && isNameAt(text, start - 1)) start--;
  return start < end && isSecret(text.slice(start, end));
}

/**
 * The words of a text that may hold a command line, two ways, since which one was meant cannot be
 * known: as a shell would split it (quotes group, `--password "a b"`), and at every space and
 * quote (`--opts="--token x"`). Each word is `[start, end)` in the text.
 */
export function commandLineWords(text: string): [grouped: SecretSpan[], plain: SecretSpan[]] {
  const grouped: SecretSpan[] = [];
  const plain: SecretSpan[] = [];
  let groupStart = -1;
  let plainStart = -1;
  let quote: string | undefined;
  for (let p = 0; p <= text.length; p++) {
    const c = text[p];
    const space = p === text.length || isSpaceAt(text, p);
    const plainBreak = space || c === '"' || c === "'";
    if (plainBreak && plainStart >= 0) plain.push({ start: plainStart, end: p });
    if (plainBreak) plainStart = -1;
    else if (plainStart < 0) plainStart = p;
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (space) {
      if (groupStart >= 0) grouped.push({ start: groupStart, end: p });
      groupStart = -1;
    } else {
      if (groupStart < 0) groupStart = p;
      if (c === '"' || c === "'") quote = c;
    }
  }
  if (groupStart >= 0) grouped.push({ start: groupStart, end: text.length });
  return [grouped, plain];
}

/** `text` with every span (merged first) replaced by `marker`. */
export function maskSpans(text: string, spans: readonly SecretSpan[], marker: string): string {
  const merged = mergeSpans(spans);
  if (merged.length === 0) return text;
  let out = '';
  let from = 0;
  for (const { start, end } of merged) {
    out += text.slice(from, start) + marker;
    from = end;
  }
  return out + text.slice(from);
}
