/** What an injected monotonic clock must answer: the metrics' options check it at each reading. */

import type { ResultCheck } from '../options';

/** What an injected monotonic clock must answer, checked at each reading (see `resultCheckedOption`). */
export const MONOTONIC_READING: ResultCheck<number> = {
  valid: (ms): ms is number => typeof ms === 'number' && Number.isFinite(ms),
  expected: 'monotonic milliseconds (a finite number, like performance.now() returns)',
};
