/**
 * Go's `/debug/pprof/cmdline` on Node.js: the command line, NUL-separated as Go writes `os.Args`:
 * the Node binary, its own flags (`process.execArgv`), the script and its arguments. Values of
 * flags that look like secrets (`--token=…`, `--db-password …`) are served as `[REDACTED]`.
 */
const SECRET_FLAG = /^--?[\w.-]*(pass(word|wd)?|secret|token|credential|api[-_]?key|private[-_]?key|auth)[\w.-]*$/i;
const SECRET_ENV_LIKE = /^([\w.-]*(pass(word|wd)?|secret|token|credential|api[-_]?key|private[-_]?key|auth)[\w.-]*)=/i;

/** The arguments with secret-looking values replaced. */
export function redactedArgs(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    if (SECRET_FLAG.test(flag)) {
      if (eq >= 0) {
        out.push(`${flag}=[REDACTED]`);
      } else {
        out.push(arg);
        // `--token value`: the next argument is the secret, unless it is another flag.
        if (i + 1 < args.length && !args[i + 1]!.startsWith('-')) {
          out.push('[REDACTED]');
          i++;
        }
      }
      continue;
    }
    const envLike = SECRET_ENV_LIKE.exec(arg);
    out.push(envLike && !arg.startsWith('-') ? `${envLike[1]}=[REDACTED]` : arg);
  }
  return out;
}

/** The body of `/debug/pprof/cmdline`. */
export function commandLine(): string {
  return redactedArgs([process.execPath, ...process.execArgv, ...process.argv.slice(1)]).join('\0');
}

/** Why `/debug/pprof/symbol` has no Node.js meaning (answered with a 404). */
export const SYMBOL_NOT_APPLICABLE =
  "no symbol lookup on Node.js: Go's /debug/pprof/symbol maps program counters to Go function names, but every profile served here already names its JavaScript functions, files and lines, so go tool pprof needs no lookup";
