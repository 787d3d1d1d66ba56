/**
 * The shell commands the console offers to copy, built from plain strings (no DOM) so that they
 * can be run through a real shell in tests. They are for a POSIX shell (sh, bash, zsh): what the
 * user pastes must reach curl or kubectl exactly as the page means it, whatever the template, the
 * variable name or the mount prefix holds (`'`, `$`, a backquote, `!`, spaces, braces).
 */

/**
 * Single quotes for a POSIX shell: nothing inside is expanded, not `$`, a backquote, `\`, `!`
 * (bash's history expansion does not look inside single quotes either) or a glob. A `'` itself
 * closes the quotes, is written escaped, and opens them again.
 */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A tab or another control character: an interactive shell acts on it when it is pasted (a tab completes). */
const CONTROL = /[\u0000-\u001f\u007f]/;
const CONTROLS = new RegExp(CONTROL.source, 'g');

/**
 * The same request as curl: `-G --data-urlencode` (the template as typed, no hand-encoding) and
 * `-g` (no globbing of `{}` and `[]` in the URL, which a mount prefix or an IPv6 host may hold). A
 * template with a control character goes URL-encoded (`--data`) instead, so the command pastes
 * as one line of printable text.
 *
 * @param url - The variable's URL without query, as the browser resolved it.
 * @param field - The JSONPath template, or `''` for none.
 * @param output - `'text'` for `output=text`; anything else is the JSON default.
 */
export function curlCommand(url: string, field: string, output: string): string {
  const parts = ['curl -gsG', shellQuote(url)];
  if (CONTROL.test(field)) parts.push('--data', shellQuote(new URLSearchParams({ field }).toString()));
  else if (field) parts.push('--data-urlencode', shellQuote(`field=${field}`));
  if (output === 'text') parts.push('--data-urlencode', 'output=text');
  return parts.join(' ');
}

/**
 * The same request through the API server's pod proxy, no port-forward needed. `$NAMESPACE` and
 * `$POD` are the user's to set: they stand in double quotes, so the shell expands them (as one
 * word each, never split or globbed); the rest (port, mount prefix, path and query) is single
 * quoted, so nothing in it is expanded. A control character left in the path is percent-encoded,
 * as a URL has it, so the command pastes as one line of printable text.
 *
 * @param path - The path and query the server sees, mount prefix included, URL-encoded.
 * @param port - The port the page was served on.
 */
export function kubectlCommand(path: string, port: string): string {
  const printable = path.replace(CONTROLS, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  return `kubectl get --raw "/api/v1/namespaces/\${NAMESPACE}/pods/\${POD}"${shellQuote(`:${port}/proxy${printable}`)}`;
}
