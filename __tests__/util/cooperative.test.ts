import { performance } from 'node:perf_hooks';
import { afterPoll, cooperativeTicker, mapCooperatively, nextTurn } from '../../lib/util/cooperative';
import { eventually } from '../helpers/eventually';

function burn(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Busy on purpose: this step must really take `ms`.
  }
}

/** Runs `count` steps of `stepMs` each through `tick`, calling `onStep` after each step. */
async function runSteps(
  tick: () => Promise<void> | undefined,
  count: number,
  stepMs: number,
  onStep: () => void = () => undefined,
): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    burn(stepMs);
    onStep();
    const pause = tick();
    if (pause) await pause;
  }
}

/** Runs `steps` steps of `stepMs` each through the ticker; answers whether other work ran meanwhile. */
async function loopWith(tick: () => Promise<void> | undefined, steps: number, stepMs: number): Promise<boolean> {
  let otherWorkRan = false;
  setImmediate(() => {
    otherWorkRan = true;
  });
  let sawOtherWork = false;
  for (let i = 0; i < steps; i += 1) {
    burn(stepMs);
    const pause = tick();
    if (pause) await pause;
    sawOtherWork ||= otherWorkRan;
  }
  return sawOtherWork;
}

describe('cooperativeTicker', () => {
  it('yields to the event loop once a slice has used its time budget', async () => {
    // Ten steps of 1 ms against a 2 ms budget, checked at every step: it must yield before the end.
    expect(await loopWith(cooperativeTicker(2, 1), 10, 1)).toBe(true);
  });

  it('does not yield while the budget lasts, and answers undefined between checks', async () => {
    const tick = cooperativeTicker(60_000, 8);
    const results = Array.from({ length: 16 }, () => tick());
    expect(results.every((r) => r === undefined)).toBe(true);
    expect(await loopWith(cooperativeTicker(60_000, 1), 5, 0)).toBe(false);
  });
});

describe('nextTurn', () => {
  it('starts the run that resumes, so the first step after a yield counts toward its slice', async () => {
    const tick = cooperativeTicker(10, 1);
    await nextTurn();
    // The step that opens the slice (a listing of many keys, say) takes longer than the budget on
    // its own: the ticker must yield at its first check instead of granting a further budget.
    burn(15);
    const pause = tick();
    expect(pause).toBeInstanceOf(Promise);
    await pause;
    // And the turn after that is a fresh run: the budget is available again.
    expect(tick()).toBeUndefined();
  });
});

describe('nextTurn without setImmediate (the console page runs it in a browser)', () => {
  it('yields through a message to itself and leaves no port open', async () => {
    const ports = (): number => process.getActiveResourcesInfo().filter((r) => r === 'MessagePort').length;
    const portsBefore = ports();
    const saved = globalThis.setImmediate;
    const order: string[] = [];
    let turn: Promise<void>;
    try {
      (globalThis as { setImmediate?: unknown }).setImmediate = undefined;
      turn = nextTurn().then(() => {
        order.push('next turn');
      });
      await Promise.resolve();
      order.push('same run');
    } finally {
      globalThis.setImmediate = saved;
    }
    await turn;
    expect(order).toEqual(['same run', 'next turn']);
    // An open port would keep the host process (or this test run) from exiting; closing takes a turn or two.
    await eventually(() => ports() === portsBefore, { timeoutMs: 1000, what: "the channel's port to close" });
  });
});

describe('mapCooperatively', () => {
  it('maps in order and lets other work run while a long conversion proceeds', async () => {
    let otherWorkRan = false;
    setImmediate(() => {
      otherWorkRan = true;
    });
    let ranDuring = false;
    const out = await mapCooperatively(
      Array.from({ length: 20 }, (_, i) => i),
      (i) => {
        burn(1);
        ranDuring ||= otherWorkRan;
        return i * 2;
      },
      2,
    );
    expect(out).toEqual(Array.from({ length: 20 }, (_, i) => i * 2));
    expect(ranDuring).toBe(true);
  });

  it('maps a short array without giving up its turn', async () => {
    let otherWorkRan = false;
    setImmediate(() => {
      otherWorkRan = true;
    });
    let ranDuring = false;
    await mapCooperatively([1, 2, 3], (i) => {
      ranDuring ||= otherWorkRan;
      return i;
    });
    expect(ranDuring).toBe(false);
  });
});

describe('jobs running at once', () => {
  /**
   * Runs `jobs` loops of `steps` steps of `stepMs` each at once, through tickers of `budgetMs`
   * checked at every step, and answers the most steps any one turn ran: turns are counted between
   * two runs of a 1 ms interval, which fire where the event loop runs its timers.
   */
  async function mostStepsInOneTurn(jobs: number, steps: number, stepMs: number, budgetMs: number): Promise<number> {
    let thisTurn = 0;
    let most = 0;
    const turns = setInterval(() => {
      most = Math.max(most, thisTurn);
      thisTurn = 0;
    }, 1);
    try {
      await Promise.all(
        Array.from({ length: jobs }, async () => {
          // Each job starts on a turn of its own, as a request's work starts in its own I/O callback.
          await nextTurn({ budgetMs });
          await runSteps(cooperativeTicker(budgetMs, 1), steps, stepMs, () => (thisTurn += 1));
        }),
      );
    } finally {
      clearInterval(turns);
    }
    return Math.max(most, thisTurn);
  }

  it.each([
    [20, 1, 5],
    [8, 2, 5],
    [5, 1, 2],
  ])('%i jobs of %i ms steps share each turn: one budget of %i ms per turn, not one per job', async (jobs, stepMs, budgetMs) => {
    // One turn runs the steps that fit the budget, plus the one that crosses it; jobs resumed
    // back to back would run a step each on top (24 steps a turn for twenty jobs of 1 ms).
    expect(await mostStepsInOneTurn(jobs, 12, stepMs, budgetMs)).toBeLessThanOrEqual(Math.ceil(budgetMs / stepMs) + 1);
  });

  it('runs the oldest job first, so jobs of one size finish one after another, not all at the end', async () => {
    const order: number[] = [];
    await Promise.all([0, 1, 2, 3].map((job) => runSteps(cooperativeTicker(1, 1), 3, 2, () => order.push(job))));
    // Each step uses the whole budget, so each turn runs one step. The first steps run as each job
    // starts; from then on the oldest job takes every turn until it is done.
    expect(order).toEqual([0, 1, 2, 3, 0, 0, 1, 1, 2, 2, 3, 3]);
  });

  it("keeps a request's place for every wait that carries its signal: its sending is not queued behind later jobs", async () => {
    const order: string[] = [];
    const request = new AbortController();
    const rendering = cooperativeTicker(1, 1, request.signal);
    burn(2);
    await rendering();
    // A later job starts and waits for a turn; then the request waits again, for a drain, say.
    const later = (async (): Promise<void> => {
      const tick = cooperativeTicker(1, 1);
      burn(2);
      await tick();
      order.push('later job');
    })();
    burn(2);
    const sending = nextTurn({ signal: request.signal }).then(() => order.push('request'));
    await Promise.all([later, sending]);
    expect(order).toEqual(['request', 'later job']);
  });

  it('sends a job that has run for its quantum behind the others: a long job cannot hold a short one back', async () => {
    const order: string[] = [];
    // 300 steps of 2 ms, each a turn of its own: 600 ms of its own running, longer than a quantum (500 ms).
    const long = runSteps(cooperativeTicker(1, 1), 300, 2, () => order.push('long'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const short = (async (): Promise<void> => {
      await nextTurn();
      order.push('short');
    })();
    await Promise.all([long, short]);
    expect(order.indexOf('short')).toBeLessThan(order.length - 1);
    expect(order.lastIndexOf('long')).toBe(order.length - 1);
  });
});

describe('abandoned work', () => {
  it.each([
    ['a ticker', (signal: AbortSignal) => cooperativeTicker(1, 1, signal)],
    ['a fresh turn', (signal: AbortSignal) => () => nextTurn({ signal })],
  ])('%s stops where it waits once its signal aborts, with the reason, and runs no further step', async (_label, make) => {
    const controller = new AbortController();
    const tick = make(controller.signal);
    let steps = 0;
    // Bounded, so that a signal that stops nothing fails the test instead of spinning for ever.
    const loop = runSteps(tick, 50, 2, () => (steps += 1));
    await eventually(() => steps >= 2, { what: 'two steps' });
    const reason = new Error('client left');
    controller.abort(reason);
    const stepsAtAbort = steps;
    await expect(loop).rejects.toBe(reason);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(steps).toBe(stepsAtAbort);
  });

  it('rejects at once when the signal was aborted before the wait', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone already'));
    await expect(nextTurn({ signal: controller.signal })).rejects.toThrow('gone already');
  });
});

describe('afterPoll', () => {
  it('waits for the event loop to poll, behind no job: a long job running does not hold it back', async () => {
    const order: string[] = [];
    const job = runSteps(cooperativeTicker(1, 1), 20, 2).then(() => order.push('job done'));
    await afterPoll();
    order.push('polled');
    await job;
    expect(order).toEqual(['polled', 'job done']);
  });

  it('rejects with the reason when its signal aborts, before or while it waits', async () => {
    const before = new AbortController();
    before.abort(new Error('gone before'));
    await expect(afterPoll(before.signal)).rejects.toThrow('gone before');
    const during = new AbortController();
    const waiting = afterPoll(during.signal);
    during.abort(new Error('gone while waiting'));
    await expect(waiting).rejects.toThrow('gone while waiting');
  });
});
