// Platform-neutral: the debug console's page runs the pprof converters on these tickers in a
// browser, so only what Node and browsers share is used (`performance`, `MessageChannel`), and
// `setImmediate` where there is one.

/** Node's `setImmediate`; looked up at each use, because a browser has none and tests replace it. */
type Immediate = (callback: () => void) => unknown;

/**
 * Runs `callback` once the event loop has had a turn. In Node that is `setImmediate`: it runs
 * after pending I/O, so the host's sockets are served between slices. A browser has no
 * `setImmediate`; a message posted to itself is the nearest equivalent, where `setTimeout` would
 * wait at least 4 ms once nested. The channel is closed after its one message, so no port is left
 * open (in Node it would keep the process alive).
 */
function onNextTurn(callback: () => void): void {
  const immediate = (globalThis as { setImmediate?: Immediate }).setImmediate;
  if (immediate) {
    immediate(callback);
    return;
  }
  const { port1, port2 } = new MessageChannel();
  port1.addEventListener('message', () => {
    port1.close();
    callback();
  });
  port1.start();
  port2.postMessage(null);
}

// When the current synchronous run began, as far as tickers know: shared by every ticker, so that
// work done in steps (stop, then convert, then encode, each awaiting only promises that are
// already settled) counts as the one stall it is for the event loop, not as three short ones.
let runStart: number | undefined;

function endRun(): void {
  runStart = undefined;
}

/**
 * The start of the current synchronous run (now, if none is counted yet); it ends when the event
 * loop next gets control. Call it before synchronous work that tickers created later should count.
 */
export function startOfRun(): number {
  if (runStart === undefined) {
    runStart = performance.now();
    onNextTurn(endRun);
  }
  return runStart;
}

/**
 * Resolves on the event loop's next turn: the one way this package yields. The run that resumes
 * counts from the turn itself, so the first step after a yield (a listing of 44 000 keys, say)
 * is part of the slice it opens instead of going uncounted until the ticker is next asked.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) =>
    onNextTurn(() => {
      startOfRun();
      resolve();
    }),
  );
}

/**
 * Lets long conversion loops share the event loop: awaiting `tick()` on every iteration yields to
 * other work once the current run has lasted `budgetMs`, and costs nothing in between. The budget
 * is time, not a step count, because one step's cost varies a hundredfold (a sample's counter
 * update against walking a deep stack), so a count that is fine for one loop stalls another. The
 * run is shared with every other ticker since the event loop last turned, and counts from the
 * ticker's creation at the latest: create it before a synchronous call that should count. The
 * clock is read every `checkEvery` steps (a read costs ~40 ns; a step may cost far less).
 */
export function cooperativeTicker(budgetMs = 5, checkEvery = 8): () => Promise<void> | undefined {
  startOfRun();
  let count = 0;
  return function tick(): Promise<void> | undefined {
    count += 1;
    if (count % checkEvery !== 0 || performance.now() - startOfRun() < budgetMs) return undefined;
    return nextTurn();
  };
}

/** `items.map(convert)` for long arrays: yields to the event loop as {@link cooperativeTicker} does. */
export async function mapCooperatively<T, R>(items: readonly T[], convert: (item: T) => R, budgetMs = 5): Promise<R[]> {
  const tick = cooperativeTicker(budgetMs);
  const out: R[] = [];
  for (const item of items) {
    out.push(convert(item));
    const pause = tick();
    if (pause) await pause;
  }
  return out;
}
