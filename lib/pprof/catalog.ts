/** The profiles served, in index order. */
export const PROFILE_NAMES = ['profile', 'heap', 'allocs', 'goroutine', 'block', 'mutex', 'trace'] as const;

/** One of {@link PROFILE_NAMES}. */
export type ProfileName = (typeof PROFILE_NAMES)[number];

/** Whether `name` is a profile this router serves. */
export function isProfileName(name: string): name is ProfileName {
  return (PROFILE_NAMES as readonly string[]).includes(name);
}

/** Index entry of one profile. */
export interface ProfileEntry {
  /** Path segment under the mount point. */
  name: ProfileName;
  /** Link relative to the mount point, with the query Go's index uses. */
  href: string;
  /** What the profile means on Node.js. */
  description: string;
  /** Accepted `format` values; the first is the default. */
  formats: readonly string[];
}

/** A sampling interval as people read it: `10 ms (100 Hz)`, `0.25 ms (4000 Hz)`. */
export function describeSamplingInterval(micros: number): string {
  const hertz = 1_000_000 / micros;
  return `${micros / 1000} ms (${Number.isInteger(hertz) ? hertz : `about ${Math.round(hertz)}`} Hz)`;
}

/** What each profile means on Node.js; the index page's text comes from here. */
export function profileCatalog(defaultSeconds: number, cpuSamplingIntervalMicros: number): ProfileEntry[] {
  return [
    {
      name: 'profile',
      href: `profile?seconds=${defaultSeconds}`,
      description: `CPU profile from V8's sampling profiler (a sample every ${describeSamplingInterval(cpuSamplingIntervalMicros)}) over ?seconds=N (default ${defaultSeconds}). pprof protobuf by default; ?format=cpuprofile gives a .cpuprofile for Chrome DevTools / VS Code. One at a time per process: a second request meanwhile answers 503 with Retry-After.`,
      formats: ['pprof', 'cpuprofile'],
    },
    {
      name: 'heap',
      href: 'heap?debug=1',
      description:
        "Live JavaScript heap from V8's sampling heap profiler, running since the router was created: estimated in-use bytes per allocating stack (inuse_space). ?gc=1 runs a full GC first; ?seconds=N gives a delta profile (what changed over N seconds; freed memory is negative); ?format=heapprofile gives a DevTools .heapprofile.",
      formats: ['pprof', 'heapprofile'],
    },
    {
      name: 'allocs',
      href: 'allocs?debug=1',
      description:
        "Every sampled allocation since the router was created, freed objects included (alloc_space): the profile for finding churn. Needs pprof option heapSamples: 'allocations' (V8 has one sampling heap profiler per process, keeping either live objects for /heap or all allocations for /allocs); otherwise 404, and continuous profilers scrape /heap instead (examples/monitoring). ?seconds=N gives what was allocated over N seconds.",
      formats: ['pprof', 'heapprofile'],
    },
    {
      name: 'goroutine',
      href: 'goroutine?debug=1',
      description:
        'Node.js analog of goroutines: active handles, requests and refed timers that keep the event loop alive (sockets, servers, timers, fs requests), counted by kind. ?debug=2 lists each handle with its details.',
      formats: ['pprof'],
    },
    {
      name: 'block',
      href: 'block?debug=1',
      description:
        "Node.js analog of the block profile: event-loop delay (how late timers fire because the loop was busy) since the router was created, with Go's sample types and cumulative values: contentions/count (delay measurements) and delay/nanoseconds (their total lateness); min/mean/p50/p90/p99/max in the comments and the text form.",
      formats: ['pprof'],
    },
    {
      name: 'trace',
      href: 'trace?seconds=1',
      description:
        "Node.js analog of Go's execution trace: a timeline of the event loop (timers, immediates, I/O callbacks), garbage collections and performance marks over ?seconds=N (default 1), as Chrome trace event JSON for ui.perfetto.dev or chrome://tracing (go tool trace reads only Go's own format). ?categories=a,b chooses among the categories the index lists. Off unless the host turns it on (pprof option trace: see the index for its measured cost); one at a time per process.",
      formats: ['json'],
    },
    {
      name: 'mutex',
      href: 'mutex?debug=1',
      description:
        "Always empty, with Go's sample types (contentions/count, delay/nanoseconds): JavaScript runs on a single thread per isolate, so there is no lock contention to sample. The shipped scrape configurations leave it off.",
      formats: ['pprof'],
    },
  ];
}
