import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '../helpers/eventually';
import { startExample, type ExampleApp } from '../helpers/example-app';
import { request } from '../helpers/http';

function sample(exposition: string, name: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

async function leaderGauge(app: ExampleApp): Promise<{ isLeader: number; transitions: number; timeAsLeader: number }> {
  const { text } = await request(`${app.metricsUrl}/metrics`);
  return {
    isLeader: sample(text, 'ctl_leader_election_is_leader')!,
    transitions: sample(text, 'ctl_leader_election_transitions_total')!,
    timeAsLeader: sample(text, 'ctl_leader_election_time_as_leader_seconds_total')!,
  };
}

// Elections run on the lease's renewal clock, in two child processes: a generous deadline.
const ELECTION = { timeoutMs: 15_000, intervalMs: 100 };

describe('leader election across two replicas of the example app', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-lease-'));
  const leaseFile = path.join(dir, 'lease.json');
  const replicas: ExampleApp[] = [];

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('elects exactly one leader, and the other takes over when the leader stops', async () => {
    replicas.push(await startExample({ leaseFile, replicaId: 'replica-a' }));
    replicas.push(await startExample({ leaseFile, replicaId: 'replica-b' }));
    const [a, b] = replicas as [ExampleApp, ExampleApp];

    const first = await eventually(
      async () => {
        const [ga, gb] = await Promise.all([leaderGauge(a), leaderGauge(b)]);
        return ga.isLeader + gb.isLeader === 1 ? { ga, gb } : undefined;
      },
      { ...ELECTION, what: 'one leader' },
    );
    // Stable: still exactly one leader a few renewals later.
    await new Promise((r) => setTimeout(r, 1000));
    const [ga, gb] = await Promise.all([leaderGauge(a), leaderGauge(b)]);
    expect(ga.isLeader + gb.isLeader).toBe(1);
    const [leader, follower] = ga.isLeader === 1 ? [a, b] : [b, a];
    const leaderBefore = ga.isLeader === 1 ? ga : gb;
    const followerBefore = ga.isLeader === 1 ? gb : ga;
    expect(first.ga.isLeader + first.gb.isLeader).toBe(1);
    // Replicas start as followers: the follower never had a transition; the leader had exactly one.
    expect(followerBefore).toEqual({ isLeader: 0, transitions: 0, timeAsLeader: 0 });
    expect(leaderBefore.transitions).toBe(1);
    expect(leaderBefore.timeAsLeader).toBeGreaterThan(0);

    expect(await leader.stop()).toBe(0);
    const after = await eventually(
      async () => {
        const g = await leaderGauge(follower);
        return g.isLeader === 1 ? g : undefined;
      },
      { ...ELECTION, what: 'the follower to take over' },
    );
    expect(after.transitions).toBe(1);
    const vars = (await request(`${follower.debugUrl}/debug/vars/leader_election`)).json();
    expect(vars['is_leader']).toBe(true);
  });
});
