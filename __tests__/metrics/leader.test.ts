import { LeaderTracker } from '../../lib/metrics/leader';
import { FakeClock } from './helpers/fake-state';

describe('LeaderTracker', () => {
  it('starts as a follower with no transitions and no time as leader', () => {
    const tracker = new LeaderTracker(new FakeClock().now);
    expect([tracker.isLeader(), tracker.transitions(), tracker.secondsAsLeader()]).toEqual([false, 0, 0]);
  });

  it('reports whether a call was a transition', () => {
    const tracker = new LeaderTracker(new FakeClock().now);
    expect([tracker.set(false), tracker.set(true), tracker.set(true), tracker.set(false), tracker.set(false)]).toEqual([
      false,
      true,
      false,
      true,
      false,
    ]);
    expect(tracker.transitions()).toBe(2);
  });

  it('sums finished terms and the running one, and does not count follower time', () => {
    const clock = new FakeClock();
    const tracker = new LeaderTracker(clock.now);
    tracker.set(true);
    clock.advance(3000);
    tracker.set(false);
    clock.advance(60_000);
    expect(tracker.secondsAsLeader()).toBe(3);
    tracker.set(true);
    clock.advance(500);
    expect(tracker.secondsAsLeader()).toBe(3.5);
    clock.advance(500);
    expect(tracker.secondsAsLeader()).toBe(4);
  });

  it('ignores clock readings that are not finite', () => {
    let reading = 0;
    const tracker = new LeaderTracker(() => reading);
    tracker.set(true);
    reading = NaN;
    expect(tracker.secondsAsLeader()).toBe(0);
    tracker.set(false);
    expect(tracker.secondsAsLeader()).toBe(0);
  });
});
