/**
 * Every spelling of a path that a client can put on the wire and that a loose router (Express's
 * default routing, Node's legacy URL parser) may take for it: casings, trailing slashes, escapes of
 * each character, double escapes, fragments, absolute-form targets, dot and empty segments,
 * backslashes and separators, and a probe's path in front. For the tests of issue 39's first class.
 */
/** Every spelling of `path` this module makes, `path` first; `rand` picks the random casings. */
export function spellings(path: string, rand: () => number): string[] {
  const out = new Set<string>([path]);
  const upper = path.toUpperCase();
  const title = path.replace(/\/(\w)/g, (_m, c: string) => `/${c.toUpperCase()}`);
  const randomCase = (): string => [...path].map((c) => (rand() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');
  const cased = [path, upper, title, randomCase(), randomCase()];
  for (const p of cased) {
    out.add(p);
    out.add(`${p}/`);
    out.add(`${p}//`);
    out.add(`${p}#`);
    out.add(`${p}#x`);
    out.add(`${p}/#/`);
    out.add(`${p}?a=b#c`);
    out.add(`http://localhost${p}`);
    out.add(`HTTP://LOCALHOST:80${p}/`);
    out.add(`${p};x`);
    out.add(`${p}%00`);
    out.add(`${p}%2F`);
    out.add(`${p}%2f.`);
  }
  // Every letter escaped, in upper and lower hex, alone and with a trailing slash and upper case.
  for (let i = 0; i < path.length; i++) {
    const hex = path.charCodeAt(i).toString(16);
    for (const h of [hex.toUpperCase(), hex]) {
      const escaped = `${path.slice(0, i)}%${h}${path.slice(i + 1)}`;
      out.add(escaped);
      out.add(`${escaped}/`);
      out.add(escaped.replace(/[a-z]/g, (c) => c.toUpperCase()));
    }
    // Double encoding: %2563 is "%63" once decoded.
    out.add(`${path.slice(0, i)}%25${path.charCodeAt(i).toString(16)}${path.slice(i + 1)}`);
  }
  // Dot and empty segments, backslashes, separators.
  const segments = path.split('/').filter(Boolean);
  for (let i = 0; i < segments.length; i++) {
    const before = segments.slice(0, i).join('/');
    const after = segments.slice(i).join('/');
    const join = (...parts: string[]): string => `/${parts.filter(Boolean).join('/')}`;
    out.add(join(before, '.', after));
    out.add(join(before, 'x', '..', after));
    out.add(join(before, '%2e', after));
    out.add(join(before, '%2E%2E', segments[i]!, after));
    out.add(`${before ? join(before) : ''}//${after}`);
    out.add(`/${[...segments.slice(0, i), after.replace(/\//g, '\\')].join('\\')}`);
    out.add(`${before ? join(before) : ''}\\${after}`);
  }
  out.add(`/healthz/..${path}`);
  out.add(`/healthz/%2E%2E${path}`);
  out.add(`/livez/..%2F..${path}`);
  out.add(`/readyz#/..${path}`);
  out.add(`/healthz/../..${path}`);
  out.add(`http://localhost/healthz/..${path}`);
  return [...out];
}
