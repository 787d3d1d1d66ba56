import type { Request, Response } from 'express';
import { delayText, delayToPprof } from '../block';
import { resourcesText, resourcesToPprof, snapshotResources } from '../goroutine';
import { emptyMutexProfile, mutexText } from '../mutex';
import type { ProfileQuery } from './query';
import { TEXT, sendBody, sendPprof } from './respond';
import type { ProfilingRuntime } from './runtime';

/** `/goroutine` (active resources), `/block` (event-loop delay) and `/mutex` (always empty): taken at once. */
export async function serveSnapshot(
  rt: ProfilingRuntime,
  req: Request,
  res: Response,
  name: 'goroutine' | 'block' | 'mutex',
  query: ProfileQuery,
): Promise<void> {
  const text = query.debug > 0;
  if (name === 'goroutine') {
    const snapshot = snapshotResources();
    if (text) sendBody(req, res, TEXT, resourcesText(snapshot, query.debug as 1 | 2));
    else await sendPprof(req, res, name, resourcesToPprof(snapshot));
  } else if (name === 'block') {
    const summary = rt.delay.summary();
    if (text) sendBody(req, res, TEXT, delayText(summary));
    else await sendPprof(req, res, name, delayToPprof(summary));
  } else if (text) {
    sendBody(req, res, TEXT, mutexText());
  } else {
    await sendPprof(req, res, name, emptyMutexProfile());
  }
}
