/**
 * A fleet report for a terminal: a status line, the findings (most severe first), then the
 * replicas as a table and the checks that fail on them. Every string of the report came from a
 * peer and goes through {@link terminalText} (escaped, bounded) before it is printed; colour, when
 * asked for, is added after the columns are measured.
 */
import type { ReplicaReport } from '../fleet/report';
import { formatRoundedDuration } from '../util/duration';
import type { ReadReport } from './read-report';
import { terminalText } from './terminal-text';

/** How to render. */
export interface RenderOptions {
  /** ANSI colour (stdout is a terminal and `NO_COLOR` is unset). */
  readonly colour: boolean;
  /** Now, in milliseconds since the epoch: ages are measured from it. */
  readonly now: number;
  /** Where the report was read (already safe to print). */
  readonly from: string;
}

type Tone = 'red' | 'yellow' | 'green' | 'dim' | 'bold' | undefined;
const TONES: Readonly<Record<Exclude<Tone, undefined>, string>> = { red: '31', yellow: '33', green: '32', dim: '2', bold: '1' };

/** One cell: its plain text (measured) and its tone (added after padding). */
interface Cell {
  readonly text: string;
  readonly tone?: Tone;
}

/** The widest a cell of the table is. */
const MAX_CELL = 48;
const MAX_MESSAGE = 400;

function paint(text: string, tone: Tone, colour: boolean): string {
  return colour && tone !== undefined ? `\x1b[${TONES[tone]}m${text}\x1b[0m` : text;
}

function cell(text: string, tone?: Tone): Cell {
  return { text: terminalText(text, MAX_CELL), tone };
}

/** A duration for a person: `850ms`, `12.3s`, `3m20s`, `5h2m`, `12d`. */
export function shortDuration(ms: number): string {
  if (ms >= 48 * 3_600_000) return `${Math.floor(ms / 86_400_000)}d`;
  if (ms >= 3_600_000) return formatRoundedDuration(Math.round(ms / 60_000) * 60_000).replace(/0s$/, '');
  return formatRoundedDuration(ms);
}

/** How long ago an ISO 8601 time was, or the text itself when it is not one. */
function ago(iso: string, now: number): string {
  const at = Date.parse(iso);
  return Number.isNaN(at) ? iso : `${shortDuration(Math.max(0, now - at))} ago`;
}

function yesNo(value: boolean | null, good: boolean): Cell {
  if (value === null) return cell('-', 'dim');
  return cell(value ? 'yes' : 'no', value === good ? undefined : 'red');
}

function readyCell(replica: ReplicaReport): Cell {
  if (replica.ready !== false) return yesNo(replica.ready, true);
  const checks = replica.failing_checks.map((c) => c.name).join(',');
  return cell(checks === '' ? 'no' : `no (${checks})`, 'red');
}

function cycleCell(replica: ReplicaReport, now: number): Cell {
  const cycle = replica.last_cycle;
  if (cycle === null) return cell('-', 'dim');
  const outcome = cycle.failed_phase === null ? cycle.outcome : `${cycle.outcome} at ${cycle.failed_phase}`;
  const when = cycle.ended ?? cycle.started;
  const age = when === null ? '' : cycle.ended === null ? ` since ${ago(when, now).replace(/ ago$/, '')}` : ` ${ago(when, now)}`;
  const took = cycle.took_ms === null ? '' : ` (${shortDuration(cycle.took_ms)})`;
  return cell(`${outcome}${age}${took}`, cycle.outcome === 'failed' ? 'red' : undefined);
}

function certificateCell(notAfter: string | null, now: number): Cell {
  if (notAfter === null) return cell('-', 'dim');
  const at = Date.parse(notAfter);
  if (Number.isNaN(at)) return cell(notAfter);
  if (at <= now) return cell(`EXPIRED ${shortDuration(now - at)} ago`, 'red');
  return cell(`in ${shortDuration(at - now)}`, at - now < 7 * 86_400_000 ? 'yellow' : undefined);
}

function optional(value: number | string | null, show: (v: number | string) => string = String): Cell {
  return value === null ? cell('-', 'dim') : cell(show(value));
}

const HEADINGS = ['POD', 'READY', 'LEADING', 'HOLDER', 'CONFIG', 'LAST CYCLE', 'FAILED', 'UPTIME', 'SUBSCRIBERS', 'CERT EXPIRES'];

/** A replica's row: its cells, or its pod and why it could not be read. */
function rowOf(replica: ReplicaReport, now: number): Cell[] | [Cell, Cell] {
  const pod = cell(replica.pod, 'bold');
  if (!replica.reachable)
    return [pod, { text: `unreachable: ${terminalText(replica.error ?? 'no reason given', MAX_MESSAGE)}`, tone: 'red' }];
  const cycles = replica.cycles;
  return [
    pod,
    readyCell(replica),
    yesNo(replica.leading, true),
    optional(replica.holder),
    optional(replica.config_version),
    cycleCell(replica, now),
    cycles === null ? cell('-', 'dim') : cell(`${cycles.failed}/${cycles.total}`, cycles.failed > 0 ? 'yellow' : undefined),
    optional(replica.uptime_seconds, (s) => shortDuration(Number(s) * 1000)),
    optional(replica.event_subscribers),
    certificateCell(replica.certificate_not_after, now),
  ];
}

/** The rows as aligned lines: the columns are measured on the cells of full rows only. */
function table(rows: readonly Cell[][], colour: boolean): string[] {
  const widths = HEADINGS.map((h, i) =>
    Math.max(h.length, ...rows.filter((r) => r.length === HEADINGS.length).map((r) => r[i]!.text.length)),
  );
  const line = (cells: readonly Cell[]): string =>
    `  ${cells
      .map((c, i) => paint(i === cells.length - 1 ? c.text : c.text.padEnd(widths[i]!), c.tone, colour))
      .join('  ')
      .trimEnd()}`;
  return [line(HEADINGS.map((h) => ({ text: h, tone: 'dim' }))), ...rows.map(line)];
}

const SEVERITY_TONES: Readonly<Record<string, Tone>> = { critical: 'red', warning: 'yellow', info: 'dim' };
const STATUS_TONES: Readonly<Record<string, Tone>> = { failing: 'red', degraded: 'yellow', healthy: 'green' };

/** The first line: how the fleet is, what was read, from where, when. */
function heading(report: ReadReport, options: RenderOptions): string {
  const count = `${report.replicas.length} replica${report.replicas.length === 1 ? '' : 's'}`;
  let what: string;
  if (report.source === null) what = `${count} (no fleet view: the replica alone), read in ${shortDuration(report.took_ms)}`;
  else {
    const observer = report.observer === null ? '' : `, seen from ${report.observer}`;
    const gathered = report.gathered === '' ? '' : `, gathered ${ago(report.gathered, options.now)} in ${shortDuration(report.took_ms)}`;
    what = `${count} (namespace ${report.source.namespace}, selector ${report.source.selector}${observer})${gathered}`;
  }
  const status = paint(report.status.toUpperCase(), STATUS_TONES[report.status], options.colour);
  return `${status}: ${terminalText(what, 2 * MAX_MESSAGE)} from ${options.from}`;
}

/** The report as text for a terminal, ending with a newline. */
export function renderReport(report: ReadReport, options: RenderOptions): string {
  const lines = [heading(report, options), ''];
  lines.push(paint('Findings', 'bold', options.colour));
  if (report.findings.length === 0) lines.push('  none');
  for (const finding of report.findings) {
    const severity = paint(finding.severity.toUpperCase().padEnd(8), SEVERITY_TONES[finding.severity], options.colour);
    const replicas = finding.replicas.length === 0 ? '' : ` [${finding.replicas.map((r) => terminalText(r, MAX_CELL)).join(', ')}]`;
    lines.push(`  ${severity}  ${terminalText(finding.kind, 64)}: ${terminalText(finding.message, MAX_MESSAGE)}${replicas}`);
  }
  lines.push('', paint('Replicas', 'bold', options.colour));
  if (report.replicas.length === 0) lines.push('  none');
  else
    lines.push(
      ...table(
        report.replicas.map((r) => rowOf(r, options.now)),
        options.colour,
      ),
    );
  const failing = report.replicas.flatMap((r) =>
    r.failing_checks.map(
      (c) =>
        `  ${terminalText(r.pod, MAX_CELL)}: ${terminalText(c.name, MAX_CELL)}${c.reason === null ? '' : `: ${terminalText(c.reason, MAX_MESSAGE)}`}`,
    ),
  );
  if (failing.length > 0) lines.push('', paint('Failing checks', 'bold', options.colour), ...failing);
  return `${lines.join('\n')}\n`;
}
