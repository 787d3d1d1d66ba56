/**
 * The path of a request as an authorizer must read it: the one spelling that the routers serve.
 *
 * Express routes loosely: case-insensitively, with or without a trailing slash, on percent-decoded
 * parameters, and it reads the path of an absolute-form target (`GET http://host/x`) and drops a
 * `#fragment` (Node's legacy URL parser, which also turns `\` into `/`). A guard that reviewed the
 * raw target would be asked about one path while another is served. So a guard reads the path
 * here, once: a target that is not in canonical form is refused, and what is left is reviewed as
 * every spelling Express may route to the same handler. Pure: nothing here knows of HTTP.
 */

/** The path to review, with the spellings it may be routed as; or why the target is refused. */
export type ReviewedPath =
  | {
      /** The request's path, percent-decoded (as the API server reads `nonResourceAttributes.path`). */
      readonly path: string;
      /**
       * Every spelling to review, `path` first: with it, when it differs, its folded form (ASCII
       * lower case, no trailing slash), the path Express's default routing also takes it for.
       */
      readonly spellings: readonly string[];
    }
  | {
      /** Why the target is not in canonical form (a `400`'s message). */
      readonly refused: string;
    };

/** Characters a canonical path holds as they are (RFC 3986 `pchar` and `/`, and `%` for escapes). */
const PATH_CHARACTERS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;
/** Characters that are never escaped in a canonical path: unreserved ones, and the separators `/` and `\`. */
const NEVER_ESCAPED = /^[A-Za-z0-9\-._~/\\]$/;
const ESCAPE = /%(?:([0-9A-Fa-f]{2})|(.{0,2}))/g;
/** The most of a path echoed in a refusal. */
const MAX_ECHOED = 128;

function echo(text: string): string {
  return JSON.stringify(text.length > MAX_ECHOED ? `${text.slice(0, MAX_ECHOED)}…` : text);
}

/**
 * The path of a request target (`req.originalUrl`), in canonical form, or why it is refused:
 * - an origin-form target (`/path?query`) only: an absolute-form target is refused;
 * - no `#` (a fragment is never sent by a client; Express would route without it);
 * - only the characters of RFC 3986's path grammar (no `\`, spaces or controls);
 * - no empty (`//`) or dot (`.`, `..`) segments;
 * - percent-escapes only where one is needed: valid hex, not of an unreserved character or a
 *   separator (`%63`, `%2F`), not of a control character, and decoding to valid UTF-8.
 */
export function reviewedPath(target: string): ReviewedPath {
  if (!target.startsWith('/')) {
    return { refused: `request target ${echo(target)} is not a path (an absolute-form target is not accepted; send the path)` };
  }
  const queryAt = target.indexOf('?');
  const raw = queryAt < 0 ? target : target.slice(0, queryAt);
  if (target.includes('#')) return { refused: `request target ${echo(target)} has a fragment (#)` };
  if (!PATH_CHARACTERS.test(raw)) return { refused: `path ${echo(raw)} has characters a path does not hold unescaped` };
  if (/\/\/|\/\.\.?(?=\/|$)/.test(raw)) return { refused: `path ${echo(raw)} has an empty or dot segment (//, /./, /../)` };
  let refusal: string | undefined;
  raw.replace(ESCAPE, (escape: string, hex: string | undefined) => {
    if (refusal !== undefined) return escape;
    if (hex === undefined) refusal = `path ${echo(raw)} has an invalid percent-escape ${echo(escape)}`;
    else {
      const code = parseInt(hex, 16);
      const char = String.fromCharCode(code);
      if (code < 0x20 || code === 0x7f) refusal = `path ${echo(raw)} escapes a control character (${escape})`;
      else if (NEVER_ESCAPED.test(char))
        refusal = `path ${echo(raw)} escapes ${echo(char)} (${escape}), which a canonical path spells as it is`;
    }
    return escape;
  });
  if (refusal !== undefined) return { refused: refusal };
  let path: string;
  try {
    path = decodeURIComponent(raw);
  } catch {
    return { refused: `path ${echo(raw)} does not decode to UTF-8` };
  }
  const folded = fold(path);
  return { path, spellings: folded === path ? [path] : [path, folded] };
}

/** `path` as Express's default routing also matches it: ASCII lower case, without a trailing slash (but `/`). */
export function fold(path: string): string {
  const lower = path.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
  return lower.length > 1 && lower.endsWith('/') ? lower.replace(/\/+$/, '') || '/' : lower;
}

/**
 * The options of the package's own Express routers that serve data: a path is served only as it
 * is written in the route (case-sensitive, a trailing slash is another path), so that the path a
 * guard reviewed is the path served. Other spellings fall through to the router's JSON 404.
 */
export const EXACT_ROUTING = Object.freeze({ caseSensitive: true, strict: true });
