import { eventually } from '../helpers/eventually';
import { requestApp } from '../helpers/http';
import { closeIntrospectionApps, introspectionApp } from '../helpers/introspection-app';
import { waitForCaches } from '../../lib/health';
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';

afterAll(closeIntrospectionApps);

const appFor = (state: IntrospectionState) => introspectionApp(state);

function deferred(): { promise: Promise<void>; resolve(): void; reject(err: Error): void } {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('waitForCaches', () => {
  it('names the caches still syncing and opens the gate when the last one has', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const services = deferred();
    let endpointsSynced = false;
    const gate = waitForCaches(state, { services: services.promise, endpoints: () => endpointsSynced }, { pollIntervalMs: 10 });
    const app = appFor(state);
    expect(gate.name).toBe('caches-synced');
    expect((await requestApp(app, '/readyz/caches-synced')).text).toBe(
      '[-]caches-synced failed: not open: waiting for caches to sync: services, endpoints\nreadyz check failed\n',
    );

    services.resolve();
    await new Promise((r) => setTimeout(r, 20));
    expect((await requestApp(app, '/readyz?verbose')).text).toContain(
      '[-]caches-synced failed: not open: waiting for caches to sync: endpoints\n',
    );
    expect(gate.isOpen).toBe(false);

    endpointsSynced = true;
    await gate.synced;
    expect(gate.isOpen).toBe(true);
    expect((await requestApp(app, '/readyz')).status).toBe(200);
  });

  it('keeps the gate closed with the error when a sync fails, and polls a throwing function again', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    const pods = deferred();
    let calls = 0;
    const gate = waitForCaches(
      state,
      {
        pods: pods.promise,
        secrets: () => {
          calls++;
          if (calls < 3) throw new Error('list failed');
          return true;
        },
      },
      { name: 'informers', pollIntervalMs: 5 },
    );
    pods.reject(new Error('forbidden: cannot list pods'));
    await eventually(() => calls >= 3, { what: 'the throwing function to be polled until it syncs' });
    expect(calls).toBeGreaterThanOrEqual(3);
    const res = await requestApp(appFor(state), '/readyz/informers');
    expect(res.status).toBe(503);
    expect(res.text).toBe('[-]informers failed: not open: cache "pods" failed to sync: forbidden: cannot list pods\nreadyz check failed\n');
    gate.remove();
    expect(state.readinessGates()).toEqual([]);
  });

  it('stops polling once removed, and opens at once with nothing to wait for', async () => {
    const state = createIntrospectionState({ waitForConfig: false });
    let calls = 0;
    const gate = waitForCaches(state, { never: () => (calls++, false) }, { pollIntervalMs: 5 });
    await eventually(() => calls >= 3, { what: 'a few polls before the gate is removed' });
    gate.remove();
    const after = calls;
    await new Promise((r) => setTimeout(r, 30));
    expect(calls).toBe(after);
    const empty = waitForCaches(state, {}, { name: 'nothing' });
    await empty.synced;
    expect(empty.isOpen).toBe(true);
  });

  it('rejects wrong arguments at the call', () => {
    const state = createIntrospectionState();
    expect(() => waitForCaches(state, { a: 5 as never })).toThrow(
      'waitForCaches: cache "a" must be a promise or a function returning a boolean',
    );
    expect(() => waitForCaches(state, {}, { pollMs: 5 } as never)).toThrow('waitForCaches: unknown option "pollMs"');
    expect(() => waitForCaches(state, {}, { pollIntervalMs: 0 })).toThrow('pollIntervalMs must be an integer from 1 to 3,600,000');
  });
});
