import { performance } from 'node:perf_hooks';
import { cooperativeTicker, mapCooperatively, nextTurn } from '../../lib/util/cooperative';
import { eventually } from '../helpers/eventually';

function burn(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Busy on purpose: this step must really take `ms`.
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
