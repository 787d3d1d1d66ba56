import { withTimeout } from '../../lib/util/with-timeout';

class TimeoutError extends Error {}

const timeoutError = (): Error => new TimeoutError('too slow');

/** Captures the settled state of a promise without awaiting it, so fake timers can be driven meanwhile. */
function track<T>(promise: Promise<T>): { state: () => 'pending' | 'resolved' | 'rejected'; value: () => unknown } {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  let value: unknown;
  promise.then(
    (v) => {
      state = 'resolved';
      value = v;
    },
    (e) => {
      state = 'rejected';
      value = e;
    },
  );
  return { state: () => state, value: () => value };
}

describe('withTimeout (fake timers)', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it.each([
    ['a synchronous value', () => 42, 42],
    ['a resolved promise', () => Promise.resolve('ok'), 'ok'],
    ['undefined', () => undefined, undefined],
    [
      'a promise that resolves before the deadline',
      () => new Promise((resolve) => setTimeout(() => resolve('late but in time'), 999)),
      'late but in time',
    ],
  ])('resolves with %s and leaves no timer behind', async (_label, run, expected) => {
    const make = jest.fn(timeoutError);
    const pending = withTimeout(run as () => unknown, 1000, make);
    await jest.advanceTimersByTimeAsync(999);
    await expect(pending).resolves.toBe(expected);
    expect(make).not.toHaveBeenCalled();
    expect(jest.getTimerCount()).toBe(0);
  });

  it.each([
    [
      'a synchronous throw',
      () => {
        throw new RangeError('inner');
      },
    ],
    ['a rejected promise', () => Promise.reject(new RangeError('inner'))],
    [
      'an async function that throws',
      async () => {
        throw new RangeError('inner');
      },
    ],
  ])('rejects with the inner error from %s, not the timeout error', async (_label, run) => {
    const make = jest.fn(timeoutError);
    const pending = withTimeout(run, 1000, make);
    await expect(pending).rejects.toThrow(RangeError);
    await expect(pending).rejects.toThrow('inner');
    expect(make).not.toHaveBeenCalled();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('passes a non-Error rejection value through unchanged', async () => {
    const reason = { code: 7 };
    await expect(withTimeout(() => Promise.reject(reason), 1000, timeoutError)).rejects.toBe(reason);
  });

  it('rejects with the timeout error exactly when timeoutMs has passed, and not before', async () => {
    const make = jest.fn(timeoutError);
    const tracked = track(withTimeout(() => new Promise<never>(() => undefined), 1000, make));
    await jest.advanceTimersByTimeAsync(999);
    expect(tracked.state()).toBe('pending');
    expect(make).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);
    expect(tracked.state()).toBe('rejected');
    expect(tracked.value()).toBeInstanceOf(TimeoutError);
    expect((tracked.value() as Error).message).toBe('too slow');
    expect(make).toHaveBeenCalledTimes(1);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('ignores the inner promise settling after the timeout fired', async () => {
    let resolveLate!: (v: string) => void;
    const tracked = track(withTimeout(() => new Promise<string>((resolve) => (resolveLate = resolve)), 50, timeoutError));
    await jest.advanceTimersByTimeAsync(50);
    resolveLate('too late');
    await Promise.resolve();
    expect(tracked.state()).toBe('rejected');
    expect(tracked.value()).toBeInstanceOf(TimeoutError);
  });

  it('with timeoutMs 0 still resolves a synchronous value (microtasks run before timers)', async () => {
    const make = jest.fn(timeoutError);
    await expect(withTimeout(() => 'now', 0, make)).resolves.toBe('now');
    expect(make).not.toHaveBeenCalled();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('calls run once, asynchronously (a throw never escapes synchronously)', () => {
    const run = jest.fn(() => {
      throw new Error('boom');
    });
    let pending: Promise<unknown> | undefined;
    expect(() => {
      pending = withTimeout(run, 1000, timeoutError);
    }).not.toThrow();
    expect(run).not.toHaveBeenCalled();
    return expect(pending)
      .rejects.toThrow('boom')
      .then(() => expect(run).toHaveBeenCalledTimes(1));
  });

  it('runs concurrent calls with independent timers', async () => {
    const slow = track(withTimeout(() => new Promise<never>(() => undefined), 100, timeoutError));
    const fast = withTimeout(() => 'fast', 100, timeoutError);
    await expect(fast).resolves.toBe('fast');
    expect(jest.getTimerCount()).toBe(1);
    await jest.advanceTimersByTimeAsync(100);
    expect(slow.state()).toBe('rejected');
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('withTimeout (real timers)', () => {
  it.each([
    ['resolves', () => 'value'],
    ['rejects', () => Promise.reject(new Error('inner'))],
  ])('clears an unref()ed timer when the call %s', async (_label, run) => {
    const setSpy = jest.spyOn(global, 'setTimeout');
    const clearSpy = jest.spyOn(global, 'clearTimeout');
    try {
      await withTimeout(run, 60_000, timeoutError).catch(() => undefined);
      expect(setSpy).toHaveBeenCalledTimes(1);
      const handle = setSpy.mock.results[0]!.value as NodeJS.Timeout;
      expect(handle.hasRef()).toBe(false);
      expect(clearSpy).toHaveBeenCalledWith(handle);
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    }
  });

  it('times out for real with a short timeout', async () => {
    await expect(withTimeout(() => new Promise<never>(() => undefined), 5, timeoutError)).rejects.toBeInstanceOf(TimeoutError);
  });
});
