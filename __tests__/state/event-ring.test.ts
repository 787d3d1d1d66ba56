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

  it('answers in order before the ring wraps', () => {
    const ring = new EventRing(4);
    ring.push(0, 'a', 'a');
    ring.push(1, 'b', 'b');
    expect(ring.newest().map((e) => e.type)).toEqual(['a', 'b']);
  });
});

describe('toEvent', () => {
  it('formats each millisecond once and never reuses a timestamp across milliseconds', () => {
    const a = toEvent(Date.UTC(2026, 0, 1, 0, 0, 0, 1), 'a', 'a');
    const b = toEvent(Date.UTC(2026, 0, 1, 0, 0, 0, 1), 'b', 'b');
    const c = toEvent(Date.UTC(2026, 0, 1, 0, 0, 0, 2), 'c', 'c');
    expect([a.timestamp, b.timestamp, c.timestamp]).toEqual(['2026-01-01T00:00:00.001Z', '2026-01-01T00:00:00.001Z', '2026-01-01T00:00:00.002Z']);
    expect(toEvent(Date.UTC(2026, 0, 1, 0, 0, 0, 1), 'd', 'd').timestamp).toBe('2026-01-01T00:00:00.001Z');
  });
});
