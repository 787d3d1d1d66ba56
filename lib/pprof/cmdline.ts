/**
 * Go's `/debug/pprof/cmdline` on Node.js: the command line, NUL-separated as Go writes `os.Args`,
 * read afresh on every request, by one rule rather than a guess at what looks secret:
 *
 * - shown: the Node binary, Node's own flags (`process.execArgv`) and the script's path;
 * - every argument after the script is `[REDACTED]`, unless the host names it in the pprof option
 *   `cmdlineArgs`: an argument equal to a named one is shown, and so is `NAME=value` for a named
 *   `NAME`. A value given as the next argument (`--port 8080`) stays hidden: name `8080` too, or
 *   pass it as `--port=8080`.
 *
 * Without a script (`node -e …`, `node -p …`, a REPL) every argument after Node's flags is an
 * argument of the code, and hidden. Entries of `process.argv` a host replaced with something not a
 * string are shown as `String()` gives them when named, else hidden like the rest.
 */
import { REDACTED } from '../state/redaction';

/** Node flags after which `process.argv[1]` is an argument of the code, not a script. */
const NO_SCRIPT_FLAGS = ['-e', '--eval', '-p', '--print', '-pe', '-i', '--interactive'];

/** Whether Node runs code given on its command line (or a REPL) rather than a script. */
function runsWithoutScript(execArgv: readonly string[]): boolean {
  return execArgv.some((flag) => NO_SCRIPT_FLAGS.includes(flag) || /^--(?:eval|print)=/.test(flag));
}

/** Each entry as text: a host may have put anything into `process.argv`. */
function textOf(item: unknown): string | undefined {
  if (typeof item === 'string') return item;
  try {
    return String(item);
  } catch {
    return undefined;
  }
}

/** Whether `arg` is shown: named whole, or as `NAME=value` of a named `NAME`. */
function isShown(arg: string, shown: ReadonlySet<string>): boolean {
  if (shown.has(arg)) return true;
  const eq = arg.indexOf('=');
  return eq > 0 && shown.has(arg.slice(0, eq));
}

/**
 * The body of `/debug/pprof/cmdline` for the command line as it is now: the binary, Node's flags,
 * the script, and the arguments after it, each `[REDACTED]` unless named in `shown`.
 */
export function commandLine(named: readonly string[]): string {
  const shown = new Set(named);
  const execArgv = Array.isArray(process.execArgv) ? process.execArgv.map((flag) => textOf(flag) ?? REDACTED) : [];
  const argv = Array.isArray(process.argv) ? process.argv : [];
  const firstArgument = runsWithoutScript(execArgv) ? 1 : 2;
  const out = [process.execPath, ...execArgv];
  for (let i = 1; i < argv.length; i += 1) {
    const text = textOf(argv[i]);
    out.push(text !== undefined && (i < firstArgument || isShown(text, shown)) ? text : REDACTED);
  }
  return out.join('\0');
}

/** Why `/debug/pprof/symbol` has no Node.js meaning (answered with a 404). */
export const SYMBOL_NOT_APPLICABLE =
  "no symbol lookup on Node.js: Go's /debug/pprof/symbol maps program counters to Go function names, but every profile served here already names its JavaScript functions, files and lines, so go tool pprof needs no lookup";
