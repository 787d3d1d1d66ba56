import { closeOnce } from '../../lib/util/close-once';

describe('closeOnce', () => {
  it('runs the shutdown once, synchronously up to its first await, and answers every call with the same promise', async () => {
    const steps: string[] = [];
    const close = closeOnce(1000, async () => {
      steps.push('sync part');
      await Promise.resolve();
      steps.push('async part');
    });
    const first = close();
    expect(steps).toEqual(['sync part']);
    expect(close()).toBe(first);
    await first;
    expect(steps).toEqual(['sync part', 'async part']);
    expect(close()).toBe(first);
  });

  it('never rejects: a throw or a rejection of the shutdown settles the promise all the same', async () => {
    await expect(
      closeOnce(1000, () => {
        throw new Error('sync');
      })(),
    ).resolves.toBeUndefined();
    await expect(closeOnce(1000, () => Promise.reject(new Error('async')))()).resolves.toBeUndefined();
  });

  it('settles after its bound when the shutdown never does', async () => {
    const startedAt = performance.now();
    await closeOnce(50, () => new Promise<void>(() => {}))();
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(45);
  });
});
