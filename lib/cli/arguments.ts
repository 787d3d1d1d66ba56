/**
 * The doctor's command line, spelled as `kubectl` spells it: `--token`, `--token-file`,
 * `--certificate-authority`, `--insecure-skip-tls-verify`, `--tls-server-name` and
 * `--request-timeout` (`30s`, `1m`, or bare seconds), each as `--flag value` or `--flag=value`.
 */
import { didYouMean } from '../options';

/** What the command line asks for, before any file is read. */
export interface DoctorArguments {
  /** The URL as given (`localhost:8080`, `https://10.0.0.7:8443/base`). */
  readonly url: string;
  /** `--token`: the bearer token. */
  readonly token: string | undefined;
  /** `--token-file`: the file holding the bearer token (a ServiceAccount token file). */
  readonly tokenFile: string | undefined;
  /** `--certificate-authority`: the PEM file of the CA that signs the server's certificate. */
  readonly certificateAuthority: string | undefined;
  /** `--insecure-skip-tls-verify`: the server's certificate is not checked. */
  readonly insecureSkipTlsVerify: boolean;
  /** `--tls-server-name`: the name the server's certificate is checked against (and SNI). */
  readonly tlsServerName: string | undefined;
  /** `--request-timeout` in milliseconds; 0 waits without a bound, as kubectl's `0` does. */
  readonly timeoutMs: number;
  /** `--json`: the report as JSON, for tools. */
  readonly json: boolean;
}

/** A parsed command line: a doctor run, a request for help or the version, or what is wrong with it. */
export type ParsedArguments =
  { readonly run: DoctorArguments } | { readonly help: true } | { readonly version: true } | { readonly problem: string };

/** `--request-timeout`'s default, as `kubectl`'s is none but a doctor must end: 10 seconds. */
export const DEFAULT_TIMEOUT_MS = 10_000;

/** The flags that take a value, by name. */
const VALUE_FLAGS = ['--token', '--token-file', '--certificate-authority', '--tls-server-name', '--request-timeout'] as const;
/** The flags that take none. */
const SWITCHES = ['--insecure-skip-tls-verify', '--json', '--help', '-h', '--version'] as const;
const KNOWN: readonly string[] = [...VALUE_FLAGS, ...SWITCHES];

type ValueFlag = (typeof VALUE_FLAGS)[number];
type Switch = (typeof SWITCHES)[number];

/** Go's duration units, in milliseconds. */
const UNITS: Readonly<Record<string, number>> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
/** The longest timeout a timer holds. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * A `--request-timeout` in milliseconds, as kubectl reads it: a Go duration (`30s`, `1m30s`,
 * `500ms`) or bare whole seconds (`30`); `0` means no bound. Undefined when it is neither.
 */
export function parseRequestTimeout(text: string): number | undefined {
  if (/^\d+$/.test(text)) return Number(text) * 1000 <= MAX_TIMEOUT_MS ? Number(text) * 1000 : undefined;
  if (!/^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.test(text)) return undefined;
  let ms = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) ms += Number(amount) * UNITS[unit!]!;
  const rounded = Math.ceil(ms);
  return rounded <= MAX_TIMEOUT_MS ? rounded : undefined;
}

/** `--flag=true|false` for a switch, as Go's flag package accepts; undefined when it is neither. */
function switchValue(inline: string | undefined): boolean | undefined {
  if (inline === undefined) return true;
  if (/^(?:true|1|t)$/i.test(inline)) return true;
  return /^(?:false|0|f)$/i.test(inline) ? false : undefined;
}

/** The mutable form the parser fills in. */
type Draft = { -readonly [K in Exclude<keyof DoctorArguments, 'url'>]: DoctorArguments[K] } & { url: string | undefined };

/** The flags whose value is kept as given, and the argument each sets. */
const TEXT_FLAGS = {
  '--token': 'token',
  '--token-file': 'tokenFile',
  '--certificate-authority': 'certificateAuthority',
  '--tls-server-name': 'tlsServerName',
} as const satisfies Record<Exclude<ValueFlag, '--request-timeout'>, keyof DoctorArguments>;

/** Applies one value flag; a problem, or undefined. */
function applyValue(draft: Draft, flag: ValueFlag, value: string): string | undefined {
  if (value === '') return `${flag} needs a value`;
  if (flag !== '--request-timeout') {
    draft[TEXT_FLAGS[flag]] = value;
    return undefined;
  }
  const ms = parseRequestTimeout(value);
  if (ms === undefined)
    return `--request-timeout must be a duration such as 30s, 1m or 500ms, or whole seconds (got ${JSON.stringify(value.slice(0, 40))})`;
  draft.timeoutMs = ms;
  return undefined;
}

/** What is wrong with a complete draft (conflicting or missing pieces), or undefined. */
function problemOf(draft: Draft): string | undefined {
  if (draft.url === undefined) return 'the URL of a replica is missing: controller-introspection doctor <url>';
  if (draft.token !== undefined && draft.tokenFile !== undefined) return '--token and --token-file are mutually exclusive: give one';
  if (draft.insecureSkipTlsVerify && draft.certificateAuthority !== undefined) {
    return '--certificate-authority and --insecure-skip-tls-verify are mutually exclusive: a CA is checked or nothing is';
  }
  return undefined;
}

/** Parses the doctor's arguments (what follows `doctor` on the command line). */
export function parseDoctorArguments(args: readonly string[]): ParsedArguments {
  const draft: Draft = {
    url: undefined,
    token: undefined,
    tokenFile: undefined,
    certificateAuthority: undefined,
    insecureSkipTlsVerify: false,
    tlsServerName: undefined,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    json: false,
  };
  let positionalOnly = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (positionalOnly || !arg.startsWith('-') || arg === '-') {
      if (draft.url !== undefined)
        return { problem: `one URL only: got ${JSON.stringify(draft.url.slice(0, 80))} and ${JSON.stringify(arg.slice(0, 80))}` };
      draft.url = arg;
      continue;
    }
    if (arg === '--') {
      positionalOnly = true;
      continue;
    }
    const equals = arg.indexOf('=');
    const name = equals < 0 ? arg : arg.slice(0, equals);
    const inline = equals < 0 ? undefined : arg.slice(equals + 1);
    if ((VALUE_FLAGS as readonly string[]).includes(name)) {
      const value = inline ?? args[++i];
      if (value === undefined) return { problem: `${name} needs a value` };
      const problem = applyValue(draft, name as ValueFlag, value);
      if (problem !== undefined) return { problem };
      continue;
    }
    if (!(SWITCHES as readonly string[]).includes(name)) {
      return { problem: `unknown flag ${JSON.stringify(name.slice(0, 80))}${didYouMean(name, KNOWN)}; see --help` };
    }
    const on = switchValue(inline);
    if (on === undefined) return { problem: `${name} takes true or false, or no value` };
    const flag = name as Switch;
    if (on && (flag === '--help' || flag === '-h')) return { help: true };
    if (on && flag === '--version') return { version: true };
    if (flag === '--json') draft.json = on;
    if (flag === '--insecure-skip-tls-verify') draft.insecureSkipTlsVerify = on;
  }
  const problem = problemOf(draft);
  return problem === undefined ? { run: { ...draft, url: draft.url! } } : { problem };
}

/** The doctor's `--help`. */
export const DOCTOR_USAGE = `Usage: controller-introspection doctor <url> [flags]

Reports on a controller's fleet: reads <url>/debug/fleet (the fleet view a replica mounts), or the
replica's own endpoints when it has none, and prints the findings first, then the replicas.
<url> is a replica's introspection server, as kubectl port-forward exposes it: localhost:8080,
http://localhost:8080, https://10.0.0.7:8443/base-path.

Exit status: 0 healthy (no finding above info), 1 findings, 2 the report could not be read.

Flags:
      --token <token>                  bearer token for the server (visible in ps: prefer --token-file)
      --token-file <file>              file holding the bearer token (a ServiceAccount token)
      --certificate-authority <file>   PEM file of the CA that signs the server's certificate
      --insecure-skip-tls-verify       do not check the server's certificate (insecure)
      --tls-server-name <name>         name to check the server's certificate against (and SNI)
      --request-timeout <duration>     give up after this long: 30s, 1m, 500ms, or seconds; 0 waits (default 10s)
      --json                           print the report as JSON (the FleetReport of GET /debug/fleet)
  -h, --help                           print this help
      --version                        print the version
`;
