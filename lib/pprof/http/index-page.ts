import { SYMBOL_NOT_APPLICABLE } from '../cmdline';
import { describeSamplingInterval, type ProfileEntry } from '../catalog';
import type { ResolvedTraceOptions } from '../options';
import type { SourceMapStatus } from '../source-maps/mapper';
import { DEFAULT_TRACE_CATEGORIES, TRACE_CATEGORIES, TRACE_COST, isTracing } from '../trace';

/** The trace endpoint as the index shows it: off (the default), or on with its limits. */
export type TraceIndex = { enabled: false } | ({ enabled: true; inProgress: boolean } & ResolvedTraceOptions);

/** {@link TraceIndex} from the resolved option. */
export function traceIndex(limits: ResolvedTraceOptions | false): TraceIndex {
  return limits === false ? { enabled: false } : { enabled: true, inProgress: isTracing(), ...limits };
}

/** Everything the index shows. */
export interface IndexModel {
  /** Path the router is mounted at, e.g. `/debug/pprof`. */
  base: string;
  /** Profiles with links already resolved against the mount point. */
  profiles: ProfileEntry[];
  /** CPU profiler backend in use. */
  backend: string;
  /** Why that backend (e.g. the addon's load error). */
  backendReason: string;
  /** What starting a CPU profile costs the host with that backend. */
  startCost: string;
  /** Heap sampling interval in bytes, or `false` when heap sampling is off. */
  heapSamplingIntervalBytes: number | false;
  /** Who reads the heap profile and why (when heap sampling is on). */
  heapReader?: { name: string; reason: string };
  /** What the heap sampler keeps: live objects (`/heap`) or every allocation (`/allocs`). */
  heapSamples?: 'live' | 'allocations';
  /** Source mapping of profile frames, or `false` when off. */
  sourceMaps: SourceMapStatus | false;
  /** CPU profile limits and state. */
  cpu: { defaultSeconds: number; maxSeconds: number; samplingIntervalMicros: number; inProgress: boolean };
  /** The trace endpoint: off, or its limits. */
  trace: TraceIndex;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The JSON form (`?format=json` or `Accept: application/json`). */
export function indexJson(model: IndexModel): string {
  return JSON.stringify({
    profiles: model.profiles,
    profiler: { backend: model.backend, reason: model.backendReason, startCost: model.startCost },
    heap:
      model.heapSamplingIntervalBytes === false
        ? { sampling: false }
        : {
            sampling: true,
            intervalBytes: model.heapSamplingIntervalBytes,
            samples: model.heapSamples ?? 'live',
            ...(model.heapReader ? { reader: model.heapReader.name, readerReason: model.heapReader.reason } : {}),
          },
    cpu: model.cpu,
    trace: {
      ...model.trace,
      ...(model.trace.enabled ? {} : { enable: 'pprof option trace: true (or trace: { maxSeconds, maxEvents, maxBytes })' }),
      categories: TRACE_CATEGORIES,
      defaultCategories: DEFAULT_TRACE_CATEGORIES,
      cost: TRACE_COST,
    },
    sourceMaps: model.sourceMaps === false ? { enabled: false } : { enabled: true, ...model.sourceMaps },
    other: [
      {
        name: 'cmdline',
        href: `${model.base}/cmdline`,
        description:
          'The command line (Node binary, its flags, the script and arguments), NUL-separated like Go; secret-looking flag values redacted.',
      },
      { name: 'symbol', href: `${model.base}/symbol`, description: SYMBOL_NOT_APPLICABLE },
    ],
  });
}

function traceLine(trace: TraceIndex): string {
  const state = trace.enabled
    ? `on, at most ${trace.maxSeconds} s (?seconds=N, default 1), ${trace.maxEvents} events and ${trace.maxBytes} bytes of events per trace${trace.inProgress ? '; a trace is being recorded right now' : ''}`
    : 'off (the host turns it on with pprof option trace: true)';
  return `${state}. Categories (?categories=a,b): ${TRACE_CATEGORIES.join(', ')}; default ${DEFAULT_TRACE_CATEGORIES.join(', ')}. Cost: ${TRACE_COST}`;
}

function sourceMapLine(status: SourceMapStatus | false): string {
  if (status === false) return 'off (profiles name the JavaScript that runs; option sourceMaps, or run Node with --enable-source-maps)';
  const failures = status.failures.map((f) => `${f.script}: ${f.reason}`).join('; ');
  return `on, ${status.mappedScripts} script(s) mapped to their sources so far${failures ? `; not mapped: ${failures}` : ''}`;
}

/** The HTML form, for browsers; every dynamic string is escaped (load errors may hold anything). */
export function indexHtml(model: IndexModel): string {
  const rows = model.profiles
    .map((p) => `<tr><td><a href="${escapeHtml(p.href)}">${escapeHtml(p.name)}</a></td><td>${escapeHtml(p.description)}</td></tr>`)
    .join('\n');
  const heap =
    model.heapSamplingIntervalBytes === false
      ? 'off (heapSamplingIntervalBytes: false)'
      : `on, keeping ${model.heapSamples === 'allocations' ? 'every allocation (served by allocs)' : 'live objects (served by heap)'}, mean interval ${model.heapSamplingIntervalBytes} bytes, read by ${model.heapReader?.name ?? 'node:inspector'} (${model.heapReader?.reason ?? ''})`;
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>/debug/pprof/</title>
<style>body{font-family:sans-serif;margin:1.5em}td{padding:.25em .75em;vertical-align:top}code{background:#eee;padding:0 .25em}</style>
</head>
<body>
<h1>/debug/pprof/</h1>
<p>Runtime profiles of this Node.js ${escapeHtml(process.version)} process, in Go's pprof formats.</p>
<p>CPU profiler: <b>${escapeHtml(model.backend)}</b> &mdash; ${escapeHtml(model.backendReason)}.<br>
CPU sampling: every ${escapeHtml(describeSamplingInterval(model.cpu.samplingIntervalMicros))} (option <code>cpuSamplingIntervalMicros</code>); ${escapeHtml(model.startCost)}.<br>
Heap sampling: ${escapeHtml(heap)}.<br>
Source maps: ${escapeHtml(sourceMapLine(model.sourceMaps))}.<br>
Trace: ${escapeHtml(traceLine(model.trace))}${model.cpu.inProgress ? '<br><b>A CPU profile is being recorded right now.</b>' : ''}</p>
<table>
<thead><tr><th>Profile</th><th>What it means on Node.js</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
<p>Also: <a href="${escapeHtml(model.base)}/cmdline">cmdline</a> (the command line, NUL-separated like Go's; secret-looking flag values redacted).
There is no <code>symbol</code>: ${escapeHtml(SYMBOL_NOT_APPLICABLE.replace(/^no symbol lookup on Node\.js: /, ''))}.</p>
<p>From a shell: <code>go tool pprof http://HOST:PORT${escapeHtml(model.base)}/profile?seconds=${model.cpu.defaultSeconds}</code>
(at most ${model.cpu.maxSeconds} seconds).</p>
</body>
</html>
`;
}
