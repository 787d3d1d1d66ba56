import { Writable } from 'node:stream';
import { JsonStreamAbortError } from '../../lib/json-stream/errors';
import { OutputGuard } from '../../lib/json-stream/output';

/** A writable whose writes complete only when the test says so. */
function heldOutput(): { out: Writable; release: () => void } {
  let pending: (() => void) | undefined;
  const out = new Writable({
    highWaterMark: 4,
    write(_chunk, _encoding, callback) {
      pending = callback;
    },
  });
  return {
    out,
    release: () => {
      const callback = pending;
      pending = undefined;
      callback?.();
    },
  };
}

describe('OutputGuard.drain', () => {
  it("resumes on the loop's turn after 'drain', behind the immediates already queued", async () => {
    const { out, release } = heldOutput();
    const guard = new OutputGuard(out, undefined);
    expect(out.write('more than four')).toBe(false);
    const order: string[] = [];
    const drained = guard.drain().then(() => order.push('resumed'));
    out.once('drain', () => {
      order.push('drain');
      // Queued from 'drain' itself, as other work of the same loop iteration would be.
      setImmediate(() => order.push('immediate'));
    });
    release();
    await drained;
    expect(order).toEqual(['drain', 'immediate', 'resumed']);
    guard.dispose();
  });

  it('rejects while waiting when the output closes, without waiting for a turn', async () => {
    const { out } = heldOutput();
    const guard = new OutputGuard(out, undefined);
    out.write('more than four');
    const waiting = guard.drain();
    out.destroy();
    await expect(waiting).rejects.toBeInstanceOf(JsonStreamAbortError);
    guard.dispose();
  });

  it('rejects when the signal aborts during the turn after drain', async () => {
    const { out, release } = heldOutput();
    const controller = new AbortController();
    const guard = new OutputGuard(out, controller.signal);
    out.write('more than four');
    const waiting = guard.drain();
    out.once('drain', () => setImmediate(() => controller.abort(new Error('gave up'))));
    release();
    await expect(waiting).rejects.toThrow('writing the JSON value was aborted');
    guard.dispose();
  });
});
