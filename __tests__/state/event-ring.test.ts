import { EventRing, toEvent } from '../../lib/state/event-ring';

describe('EventRing', () => {
  it('keeps the newest events oldest-first and overwrites the oldest when full', () => {
    const ring = new EventRing(3);
    for (let i = 1; i <= 5; i++) ring.push(Date.UTC(2026, 0, 1, 0, 0, i), `t${i}`, `s${i}`);
    expect(ring.length).toBe(3);
    expect(ring.newest().map((e) => e.type)).toEqual(['t3', 't4', 't5']);
    expect(ring.newest(2).map((e) => e.summary)).toEqual(['s4', 's5']);
    expect(ring.newest(10).map((e) => e.type)).toEqual(['t3', 't4', 't5']);
    expect(ring.newest(0)).toEqual([]);
    expect(ring.newest()[0]!.timestamp).toBe('2026-01-01T00:00:03.000Z');
  });

  it('numbers events from 1, filters by type, type prefix, correlation id and seq, and keeps the newest matches', () => {
    const ring = new EventRing(5);
    expect(ring.push(0, 'reconciliation.triggered', 'r', 'c1')).toBe(1);
    ring.push(1, 'deployment.started', 'd', 'c1', { endpoints: 2 });
    ring.push(2, 'deployment.failed', 'f', 'c1');
    ring.push(3, 'reconciliation.triggered', 'r', 'c2');
    ring.push(4, 'deployment.started', 'd', 'c2');
    expect(ring.read({ type: 'deployment.' }).events.map((e) => e.seq)).toEqual([2, 3, 5]);
    expect(ring.read({ type: 'deployment' }).events).toEqual([]);
    expect(ring.read({ type: 'deployment.started', correlationId: 'c1' }).events).toEqual([
      {
        seq: 2,
        timestamp: '1970-01-01T00:00:00.001Z',
        type: 'deployment.started',
        summary: 'd',
        correlation_id: 'c1',
        details: { endpoints: 2 },
      },
    ]);
    expect(ring.read({ since: 3 }).events.map((e) => e.seq)).toEqual([4, 5]);
    expect(ring.read({ type: 'deployment.' }, 2).events.map((e) => e.seq)).toEqual([3, 5]);
    // Wrapping: seq 1 and 2 are overwritten; a reader behind them learns where the ring starts.
    ring.push(5, 'x', 'x');
    ring.push(6, 'y', 'y');
    const page = ring.read({ since: 0 });
    expect(page.events.map((e) => e.seq)).toEqual([3, 4, 5, 6, 7]);
    expect({ oldestSeq: page.oldestSeq, nextSeq: page.nextSeq, lastSeq: ring.lastSeq }).toEqual({ oldestSeq: 3, nextSeq: 8, lastSeq: 7 });
    // Events without a correlation id or details have neither key.
    expect(Object.keys(ring.read({ since: 6 }).events[0]!)).toEqual(['seq', 'timestamp', 'type', 'summary']);
  });

  it('answers in order before the ring wraps', () => {
    const ring = new EventRing(4);
    ring.push(0, 'a', 'a');
    ring.push(1, 'b', 'b');
    expect(ring.newest().map((e) => e.type)).toEqual(['a', 'b']);
  });
});

describe('toEvent', () => {
  it('formats each millisecond once and never reuses a timestamp across milliseconds', () => {
    const a = toEvent(1, Date.UTC(2026, 0, 1, 0, 0, 0, 1), 'a', 'a');
    const b = toEvent(1, Date.UTC(2026, 0, 1, 0, 0, 0, 1), 'b', 'b');
    const c = toEvent(1, Date.UTC(2026, 0, 1, 0, 0, 0, 2), 'c', 'c');
    expect([a.timestamp, b.timestamp, c.timestamp]).toEqual([
      '2026-01-01T00:00:00.001Z',
      '2026-01-01T00:00:00.001Z',
      '2026-01-01T00:00:00.002Z',
    ]);
    expect(toEvent(1, Date.UTC(2026, 0, 1, 0, 0, 0, 1), 'd', 'd').timestamp).toBe('2026-01-01T00:00:00.001Z');
  });
});
