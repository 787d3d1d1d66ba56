import type { Profile } from 'pprof-format';
import { PprofBuilder } from './pprof-builder';

/**
 * A valid, empty profile with Go's mutex sample types, which is what Go answers while mutex
 * profiling is off. JavaScript runs on one thread per isolate, so there is no lock contention to
 * sample; waiting shows up as event-loop delay (`/block`) instead.
 */
export function emptyMutexProfile(): Profile {
  return new PprofBuilder().build({
    sampleTypes: [
      { type: 'contentions', unit: 'count' },
      { type: 'delay', unit: 'nanoseconds' },
    ],
    samples: [],
    periodType: { type: 'contentions', unit: 'count' },
    period: 0,
    comments: ['Node.js has no mutex contention to report: JavaScript runs on a single thread per isolate'],
  });
}

/** The `debug=1` text form. */
export function mutexText(): string {
  return [
    '--- mutex:',
    '# Node.js has no mutex contention to report: JavaScript runs on a single thread per isolate,',
    '# so nothing waits on a lock; see /block (event-loop delay) for time spent waiting to run.',
    'sampling period=0',
    '',
  ].join('\n');
}
