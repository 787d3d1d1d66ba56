/**
 * Long answers of /debug/vars stop when their client goes away: a streamed dump, a size
 * measurement, a selection printed as text or measured against its limit, an event watch's replay;
 * and a client gone before the router ran (a host middleware awaited something) gets no work at all.
 * Work is counted in serializer steps (every JSON text, dump or selection, is written by it) and
 * reads of the event ring.
 */
import { JsonChunker } from '../../lib/json-stream/serializer';
import { createIntrospectionState } from '../../lib/state/store';
import type { IntrospectionState } from '../../lib/state/types';
import { closingApp, countCallsPerTest, leaveWhen, quietFor, type ClosingApp } from '../helpers/client-gone';
import { closeAllListening, listen, open, request } from '../helpers/http';
import { closeIntrospectionApps, introspectionApp } from '../helpers/introspection-app';
import type { IntrospectionRouterOptions } from '../../lib/introspection/router';

afterEach(closeAllListening);
afterAll(closeIntrospectionApps);

const chunkerSteps = countCallsPerTest(JsonChunker.prototype, 'step');
const steps = (): number => chunkerSteps.count();

/**
 * A variable of about 25 MB in 10 000 objects (a selection of all of them stays within the
 * engine's default result and step limits), so every way of answering it takes many slices.
 */
function bigState(): { state: IntrospectionState; reads: () => number } {
  const state = createIntrospectionState();
  const items = Array.from({ length: 10_000 }, (_, i) => ({ name: `object-${i}`, namespace: `team-${i % 40}`, text: 'x'.repeat(2500), i }));
  let reads = 0;
  state.publishVar('big', () => {
    reads += 1;
    return { items };
  });
  return { state, reads: () => reads };
}

async function serve(
  state: IntrospectionState,
  delayMs = 0,
  options: IntrospectionRouterOptions = {},
): Promise<{ origin: string; served: ClosingApp }> {
  const served = closingApp(introspectionApp(state, { limits: { atOnceBudgetMs: 0 }, ...options }), delayMs);
  return { origin: (await listen(served.app)).origin, served };
}

describe('a client that leaves stops its answer', () => {
  it.each([
    ['a streamed dump', '/debug/vars/big'],
    ['a size measurement (?size=1)', '/debug/vars/big?size=1'],
    ['a selection printed as text', '/debug/vars/big?field={.items[*]}&output=text'],
    [
      'a selection printed as text, one range per item',
      `/debug/vars/big?field=${encodeURIComponent('{range .items[*]}{@}{end}')}&output=text`,
    ],
    ['a multi-valued selection measured against its limit', '/debug/vars/big?field={.items[*]}'],
  ])('%s: no serializer step runs after the close', async (_label, path) => {
    const { state } = bigState();
    const { origin, served } = await serve(state, 0, { limits: { atOnceBudgetMs: 0, jsonPath: { maxOutputBytes: 512 * 1024 * 1024 } } });
    await leaveWhen(`${origin}${path}`, () => steps() > 0, served);
    const atClose = steps();
    await quietFor(150);
    expect(steps()).toBe(atClose);
  });

  it.each([
    ['the whole variable', '/debug/vars/big'],
    ['a selection', '/debug/vars/big?field={.items[*]}&output=text'],
  ])('gone before the router ran, asking for %s: the variable is not even read', async (_label, path) => {
    const { state, reads } = bigState();
    const { origin, served } = await serve(state, 80, { limits: { atOnceBudgetMs: 0, maxConcurrentReads: 1 } });
    await leaveWhen(`${origin}${path}`, () => served.arrived() > 0, served);
    await quietFor(150);
    expect(reads()).toBe(0);
    expect(steps()).toBe(0);
    // Its turn to read was not kept either: with one read at a time, the next client is answered.
    const res = await request(`${origin}/debug/vars/big?field={.items[0].name}`);
    expect(res.status).toBe(200);
    expect(res.json()).toBe('object-0');
  });
});

describe('event watches', () => {
  it('gone before the router ran: no watch is opened, so none holds a place or replays the ring', async () => {
    const state = createIntrospectionState({ eventCapacity: 10_000 });
    for (let i = 0; i < 10_000; i++) state.publishEvent('replayed', `event ${i}`);
    let ringReads = 0;
    const readEvents = state.readEvents.bind(state);
    jest.spyOn(state, 'readEvents').mockImplementation((...args) => {
      ringReads += 1;
      return readEvents(...args);
    });
    const { origin, served } = await serve(state, 80, { watch: { maxWatchers: 1 } });
    await leaveWhen(`${origin}/debug/vars/events?watch=1&since=0`, () => served.arrived() > 0, served);
    await quietFor(100);
    expect(ringReads).toBe(0);
    // The one place for a watch is free: the next client gets it.
    const watch = await open(`${origin}/debug/vars/events?watch=1`);
    expect(watch.statusCode).toBe(200);
    watch.destroy();
  });

  it('a client that leaves during the replay stops it: the ring is read no more', async () => {
    const state = createIntrospectionState({ eventCapacity: 200_000 });
    const summary = 's'.repeat(300);
    for (let i = 0; i < 200_000; i++) state.publishEvent('replayed', summary, { details: { i } });
    let ringReads = 0;
    const readEvents = state.readEvents.bind(state);
    jest.spyOn(state, 'readEvents').mockImplementation((...args) => {
      ringReads += 1;
      return readEvents(...args);
    });
    const { origin, served } = await serve(state);
    // Two reads: the watch's start and its replay's first step.
    await leaveWhen(`${origin}/debug/vars/events?watch=1&since=0`, () => ringReads > 2, served);
    const atClose = ringReads;
    await quietFor(100);
    expect(ringReads).toBe(atClose);
    // The replay stopped early: the ring takes thousands of steps to replay.
    expect(atClose).toBeLessThan(1000);
  });
});
