/**
 * The shipped Prometheus rules (`examples/monitoring/rules.yml`) against the real Prometheus tools,
 * 2.42 (Debian) and 3.16 (built from its module): each version's `promtool check rules` accepts
 * them, its `promtool test rules` runs their unit tests (every alert firing and silent, exact labels
 * and annotations), and a real Prometheus of each version that loads them and scrapes two example
 * replicas fires and resolves the leadership alerts as replicas stop and start. Both servers scrape
 * the same two replicas at once, so the replicas' lifecycle (the slow part) runs once.
 *
 * Without a version's binaries its tests skip, unless `CI` is set, where they fail.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requireFreshDist } from '../helpers/dist';
import { eventually } from '../helpers/eventually';
import { startExample, type ExampleApp } from '../helpers/example-app';
import { freePorts } from '../helpers/ports';
import { describeWithPeer } from '../helpers/peers';
import {
  describeWithPrometheus,
  prometheusPeers,
  prometheusRuns,
  startPrometheus,
  type PrometheusPeer,
  type PrometheusServer,
} from './prometheus-harness';

const MONITORING = path.resolve(__dirname, '..', '..', 'examples', 'monitoring');
const RULES = path.join(MONITORING, 'rules.yml');
const RULE_TESTS = path.join(MONITORING, 'rules.test.yml');

const PEERS = prometheusPeers();

function promtool(peer: PrometheusPeer, ...args: string[]): Promise<{ exitCode: number | null; output: string }> {
  const promtoolBin = peer.promtool;
  if (!promtoolBin) throw new Error(peer.missing ?? `${peer.label}: no promtool`);
  return new Promise((resolve, reject) => {
    const child = spawn(promtoolBin, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: MONITORING });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ exitCode, output }));
  });
}

/** Names of every alerting rule in the file, read from its `- alert:` lines. */
function alertNames(rulesYaml: string): string[] {
  return [...rulesYaml.matchAll(/^\s*- alert:\s*(\S+)\s*$/gm)].map((m) => m[1]!);
}

for (const peer of PEERS) {
  describeWithPrometheus(peer)(`shipped Prometheus rules under promtool (${peer.label})`, () => {
    it('pass promtool check rules', async () => {
      const result = await promtool(peer, 'check', 'rules', RULES);
      expect(result.output).toContain('SUCCESS: 13 rules found');
      expect(result.exitCode).toBe(0);
    });

    it('pass promtool test rules, and every alert has a unit test', async () => {
      const alerts = alertNames(fs.readFileSync(RULES, 'utf8'));
      expect(alerts).toHaveLength(9);
      const tests = fs.readFileSync(RULE_TESTS, 'utf8');
      for (const alert of alerts) expect(tests).toContain(`alertname: ${alert}`);
      const result = await promtool(peer, 'test', 'rules', RULE_TESTS);
      expect(result.output).toContain('SUCCESS');
      expect(result.exitCode).toBe(0);
    });

    it('fail promtool test rules when an alert is broken (the tests can fail)', async () => {
      // The same tests against a copy whose split-brain threshold is wrong must fail.
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctl-rules-'));
      try {
        const broken = fs
          .readFileSync(RULES, 'utf8')
          .replace('expr: sum by (job) (ctl_leader_election_is_leader) > 1', 'expr: sum by (job) (ctl_leader_election_is_leader) > 2');
        expect(broken).not.toBe(fs.readFileSync(RULES, 'utf8'));
        fs.writeFileSync(path.join(dir, 'rules.yml'), broken);
        fs.copyFileSync(RULE_TESTS, path.join(dir, 'rules.test.yml'));
        const result = await promtool(peer, 'test', 'rules', path.join(dir, 'rules.test.yml'));
        expect(result.exitCode).not.toBe(0);
        expect(result.output).toContain('alertname: ControllerSeveralLeaders');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

const LEADER_COUNT_ALERTS = ['ControllerNoLeader', 'ControllerSeveralLeaders'];

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

/** The versions the firing test runs: those that are here, and in CI all of them (a missing one fails). */
const RUNNING = PEERS.filter(prometheusRuns);
for (const peer of PEERS) {
  if (!RUNNING.includes(peer)) {
    console.warn(`not firing the alerts in ${peer.label}: ${peer.elsewhere ?? `${peer.missing} (set CI to make this a failure)`}`);
  }
}

describeWithPeer(RUNNING.length === 0 ? 'no Prometheus version is here to fire the alerts in' : undefined)(
  `shipped leadership alerts in a real Prometheus scraping two example replicas (${RUNNING.map((peer) => peer.label).join(', ')})`,
  () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ctl-alerts-'));
    const replicas = new Map<string, ExampleApp>();
    const servers: Array<{ server: PrometheusServer; label: string }> = [];

    // The example replicas run the built package.
    beforeAll(requireFreshDist);

    afterAll(async () => {
      // Each stop runs even if another failed, so no process outlives the test.
      const results = await Promise.allSettled([...servers.map((s) => s.server.stop()), ...[...replicas.values()].map((r) => r.stop())]);
      fs.rmSync(dir, { recursive: true, force: true });
      const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failure) throw failure.reason;
    });

    it('fires and resolves "several leaders" and "no leader" as replicas stop and start', async () => {
      // The expressions are the shipped ones; only `for:` is shortened so the test takes seconds, not
      // minutes (the durations themselves are covered by promtool test rules above).
      const rules = fs.readFileSync(RULES, 'utf8').replace(/^(\s+)for: \S+$/gm, '$1for: 0s');
      expect(rules).not.toMatch(/for: [1-9]/);
      const rulesFile = path.join(dir, 'rules.yml');
      fs.writeFileSync(rulesFile, rules);

      const [a, b] = (await freePorts(2)) as [number, number];
      const ports = { a, b };
      // Two lease files: both replicas win their own lease, the split brain the alert is for.
      const start = async (name: 'a' | 'b'): Promise<void> => {
        const app = await startExample({
          leaseFile: path.join(dir, `lease-${name}.json`),
          replicaId: `replica-${name}`,
          metricsPort: ports[name],
        });
        replicas.set(name, app);
        await app.waitForLog((l) => l['msg'] === 'became leader');
      };
      const stop = async (name: 'a' | 'b'): Promise<void> => {
        expect(await replicas.get(name)!.stop()).toBe(0);
        replicas.delete(name);
      };
      await Promise.all([start('a'), start('b')]);

      const targets = [new URL(`http://127.0.0.1:${ports.a}/metrics`), new URL(`http://127.0.0.1:${ports.b}/metrics`)];
      // The same Prometheus set-up as the exemplar test (exemplars.test.ts): exemplar storage on.
      for (const peer of RUNNING) {
        const server = await startPrometheus(peer, targets, { ruleFiles: [rulesFile], features: ['exemplar-storage'] });
        servers.push({ server, label: peer.label });
      }
      const firing = async (server: PrometheusServer): Promise<string[]> => {
        const { alerts } = await server.api<{ alerts: Alert[] }>('/api/v1/alerts');
        return alerts
          .filter((a) => a.state === 'firing' && LEADER_COUNT_ALERTS.includes(a.labels['alertname']!))
          .map((a) => `${a.labels['alertname']}{job=${a.labels['job']}}`)
          .sort();
      };
      /** Waits until every server fires exactly `expected`. */
      const until = async (what: string, expected: string[]): Promise<void> => {
        await Promise.all(
          servers.map(async ({ server, label }) => {
            try {
              await eventually(async () => JSON.stringify(await firing(server)) === JSON.stringify(expected), {
                timeoutMs: 30_000,
                intervalMs: 200,
                what: `${what} in ${label}`,
              });
            } catch (err) {
              throw new Error(
                `${(err as Error).message}; firing: ${JSON.stringify(await firing(server))}\n--- prometheus log ---\n${server.log()}`,
              );
            }
          }),
        );
      };

      await until('"several leaders" to fire with both replicas leading', ['ControllerSeveralLeaders{job=controller}']);
      await stop('b');
      await until('"several leaders" to resolve with one replica left', []);
      await stop('a');
      await until('"no leader" to fire with every replica stopped', ['ControllerNoLeader{job=controller}']);
      await start('a');
      await until('"no leader" to resolve when a replica leads again', []);
    });
  },
);
