import type { Session } from 'node:inspector/promises';
import { openSession } from '../inspector-session';

/** How often the keeping profile is replaced, bounding the samples V8 holds for it. */
const ROTATE_MS = 10_000;
const TITLE = 'controller-introspection:code-log';

/** An inspector session whose CPU profiler stays alive, so profiles started on it start at once. */
export interface CodeLogKeeper {
  /** The session to start requested profiles on (resolves once the keeping profile runs). */
  readonly session: Promise<Session>;
  /** Stops the keeping profile and closes the session. Idempotent. */
  release(): void;
}

/**
 * V8 logs every compiled function (a heap walk) when a CPU profiler starts its first profile, and
 * the inspector disposes of its profiler when the last profile of its session stops, so every
 * `Profiler.start` walks the heap again. Keeping one profile running on the session keeps the
 * profiler, and its code log, alive: a console profile (the inspector's only second profile slot
 * on a session) runs at the sampling interval and is replaced every {@link ROTATE_MS} ms (the new
 * one starts before the old one stops, so the profiler never goes idle). Requested profiles then
 * start on this session without a walk. The one walk happens here, at router creation.
 */
export function keepCodeLog(samplingIntervalMicros: number): CodeLogKeeper {
  const session = openSession();
  let released = false;
  let generation = 0;
  let timer: NodeJS.Timeout | undefined;
  const title = (n: number): string => `${TITLE}:${n}`;
  const ready = (async () => {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: samplingIntervalMicros });
    if (released) return session;
    console.profile(title(generation));
    timer = setInterval(() => {
      console.profile(title(generation + 1));
      console.profileEnd(title(generation));
      generation++;
    }, ROTATE_MS);
    timer.unref();
    return session;
  })();
  // A failure here surfaces when a profile is requested; it must not become an unhandled rejection.
  ready.catch(() => undefined);
  return {
    session: ready,
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      // Disconnecting stops every profile of the session without serialising it.
      session.disconnect();
    },
  };
}
