/**
 * The real Prometheus scrapes a guarded /metrics over TLS: an Express app on
 * `https.createServer(app)` whose certificate (for 127.0.0.1, signed by a test CA made with openssl)
 * is served by watchServingCertificate, with createKubeAuth in front of the metrics router and a
 * real kube-apiserver (RBAC on, examples/kubernetes/metrics-rbac.yaml applied) deciding. A job with
 * the Prometheus ServiceAccount's token is up; a job without one is down with a 401; a certificate
 * rotation while Prometheus scrapes every second costs no scrape.
 *
 * Needs `prometheus` on PATH (Debian package) and the control plane of `scripts/build-peers.sh`;
 * without either it skips, unless `CI` is set, where it fails.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import express from 'express';
import yaml from 'js-yaml';
import { Registry } from 'prom-client';
import { createKubeAuth, type KubeAuth, type KubeAuthApi } from '../../lib/kubernetes/kube-auth';
import { watchServingCertificate, type ServingCertificateWatch } from '../../lib/tls/serving-certificate';
import { createControllerMetrics, createKubeAuthMetrics, createMetricsRouter } from '../../lib/metrics';
import { describeWithControlPlane, startControlPlane, type ControlPlane, type KubeObject } from '../helpers/control-plane';
import { untilAllowed } from '../helpers/rbac';
import { eventually } from '../helpers/eventually';
import { describeWithPeer } from '../helpers/peers';
import { testCertificates, type CertificatePair } from '../helpers/certificates';
import { findBinary, startPrometheus, type PrometheusServer } from './prometheus-harness';

const MANIFEST = path.join(__dirname, '..', '..', 'examples', 'kubernetes', 'metrics-rbac.yaml');
const prometheusBin = findBinary('prometheus');
const describePeer = describeWithPeer(prometheusBin ? undefined : 'prometheus not on PATH (apt-get install -y prometheus)');

const certificates = testCertificates('prom-tls-auth-');
const { dir, caFile, served } = certificates;

const fingerprintOf = (certFile: string): string => new X509Certificate(fs.readFileSync(certFile)).fingerprint256;

/** The review API over the control plane's own client, as `reviewerToken`; a refusal is an error. */
function reviewApi(plane: ControlPlane, reviewerToken: string): KubeAuthApi {
  const post = async <T>(urlPath: string, body: unknown): Promise<T> => {
    const answer = await plane.request('POST', urlPath, body, reviewerToken);
    if (answer.status >= 300) throw new Error(`HTTP ${answer.status}`);
    return answer.body as T;
  };
  return {
    createTokenReview: ({ body }) => post('/apis/authentication.k8s.io/v1/tokenreviews', body),
    createSubjectAccessReview: ({ body }) => post('/apis/authorization.k8s.io/v1/subjectaccessreviews', body),
  };
}

interface Target {
  readonly health: string;
  readonly lastError: string;
  readonly labels: { readonly job: string };
}

describePeer('Prometheus scraping a TLS /metrics guarded by createKubeAuth', () => {
  describeWithControlPlane('against a real kube-apiserver with RBAC', () => {
    let plane: ControlPlane;
    let server: https.Server;
    let watch: ServingCertificateWatch;
    let auth: KubeAuth;
    let prometheus: PrometheusServer;
    let port: number;
    let first: CertificatePair;
    let second: CertificatePair;
    /** The fingerprint of the certificate each scrape with a token came over, in order. */
    const scrapedOver: string[] = [];

    const targets = async (): Promise<Map<string, Target>> => {
      const data = await prometheus.api<{ activeTargets: Target[] }>('/api/v1/targets?state=active');
      return new Map(data.activeTargets.map((t) => [t.labels.job, t]));
    };
    const instant = async (query: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>> =>
      (
        await prometheus.api<{ result: Array<{ metric: Record<string, string>; value: [number, string] }> }>(
          `/api/v1/query?query=${encodeURIComponent(query)}`,
        )
      ).result;

    beforeAll(async () => {
      first = certificates.leaf('first');
      second = certificates.leaf('second');
      certificates.install(first);

      plane = await startControlPlane();
      await plane.apply(yaml.loadAll(fs.readFileSync(MANIFEST, 'utf8')) as KubeObject[]);
      const reviewerToken = await plane.serviceAccountToken('lb-system', 'lb-controller');
      const scraperToken = await plane.serviceAccountToken('monitoring', 'prometheus');
      // RBAC reaches the authorizer through its informers: wait until the binding is in force.
      await untilAllowed(plane, 'system:serviceaccount:monitoring:prometheus', '/metrics');

      const registry = new Registry();
      createControllerMetrics(registry);
      auth = createKubeAuth(reviewApi(plane, reviewerToken), createKubeAuthMetrics(registry));
      const app = express();
      app.use(auth);
      app.use(createMetricsRouter(registry));
      server = https.createServer(app);
      server.on('request', (req: express.Request) => {
        if (req.headers.authorization === undefined) return;
        const local = (req.socket as tls.TLSSocket).getCertificate();
        scrapedOver.push(local !== null && 'fingerprint256' in local ? local.fingerprint256 : '');
      });
      watch = watchServingCertificate(server, undefined, { certFile: served.cert, keyFile: served.key, checkIntervalMs: 200 });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;

      const tokenFile = path.join(dir, 'prometheus.token');
      fs.writeFileSync(tokenFile, scraperToken, { mode: 0o600 });
      const job = (name: string, extra: string[]): string[] => [
        `  - job_name: ${name}`,
        '    scheme: https',
        '    metrics_path: /metrics',
        '    tls_config:',
        `      ca_file: ${JSON.stringify(caFile)}`,
        ...extra,
        '    static_configs:',
        `      - targets: ["127.0.0.1:${port}"]`,
      ];
      const scrapeConfigs = [
        ...job('authorized', ['    authorization:', `      credentials_file: ${JSON.stringify(tokenFile)}`]),
        ...job('anonymous', []),
      ].join('\n');
      prometheus = await startPrometheus(prometheusBin!, [], { scrapeConfigs });
    }, 120_000);

    afterAll(async () => {
      await prometheus?.stop();
      await watch?.close();
      await auth?.close();
      await new Promise<void>((resolve) => (server?.listening ? server.close(() => resolve()) : resolve()));
      await plane?.stop();
      certificates.remove();
    }, 60_000);

    it('scrapes with the ServiceAccount token (up, series stored) and refuses the job without one (401)', async () => {
      const seen = await eventually(
        async () => {
          const jobs = await targets();
          const authorized = jobs.get('authorized');
          const anonymous = jobs.get('anonymous');
          return authorized?.health === 'up' && anonymous?.health === 'down' ? { authorized, anonymous } : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 250, what: 'job authorized up and job anonymous down' },
      );
      expect(seen.authorized.lastError).toBe('');
      expect(seen.anonymous.lastError).toMatch(/\b401\b/);

      const leader = await eventually(async () => {
        const result = await instant('ctl_leader_election_is_leader{job="authorized"}');
        return result.length > 0 ? result : undefined;
      });
      expect(leader[0]!.metric.instance).toBe(`127.0.0.1:${port}`);
      expect(await instant('ctl_leader_election_is_leader{job="anonymous"}')).toEqual([]);
      // The guard counted both: the token's scrapes allowed, the anonymous ones refused.
      const outcomes = await eventually(async () => {
        const result = await instant('ctl_auth_requests_total{job="authorized",outcome=~"allowed|unauthenticated"} > 0');
        return result.length === 2 ? result : undefined;
      });
      expect(outcomes.map((r) => r.metric.outcome).sort()).toEqual(['allowed', 'unauthenticated']);
      console.log(`prometheus-tls-auth: anonymous job's last error: ${seen.anonymous.lastError}`);
    }, 60_000);

    it('keeps every scrape up while the serving certificate rotates, and new connections see the new certificate', async () => {
      const firstPrint = fingerprintOf(first.cert);
      const secondPrint = fingerprintOf(second.cert);
      expect(await certificates.servedFingerprint(port)).toBe(firstPrint);
      // At least two good scrapes before the window opens.
      await eventually(async () => Number((await instant('count_over_time(up{job="authorized"}[3s])'))[0]?.value[1] ?? 0) >= 2, {
        timeoutMs: 10_000,
        intervalMs: 250,
      });

      const start = Math.ceil(Date.now() / 1000);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      certificates.install(second);
      await watch.check();
      expect(watch.current.fingerprint256).toBe(secondPrint);
      expect(await certificates.servedFingerprint(port)).toBe(secondPrint);
      // Prometheus keeps its connection alive: drop it while idle (as an idle timeout would), so the
      // next scrape's handshake is shown the new certificate.
      const before = scrapedOver.length;
      expect(new Set(scrapedOver.slice(0, before))).toEqual(new Set([firstPrint]));
      server.closeIdleConnections();
      await new Promise((resolve) => setTimeout(resolve, 5000));
      expect(scrapedOver.slice(before)).toContain(secondPrint);
      expect(scrapedOver.at(-1)).toBe(secondPrint);
      const end = Math.floor(Date.now() / 1000) - 1;

      const range = await eventually(
        async () => {
          const data = await prometheus.api<{ result: Array<{ values: Array<[number, string]> }> }>(
            `/api/v1/query_range?query=${encodeURIComponent('up{job="authorized"}')}&start=${start}&end=${end}&step=1`,
          );
          const values = data.result[0]?.values ?? [];
          return values.length >= end - start ? values : undefined;
        },
        { timeoutMs: 5000, intervalMs: 250, what: `samples of up{job="authorized"} from ${start} to ${end}` },
      );
      expect(range.filter(([, value]) => value !== '1')).toEqual([]);
      // No failed scrape in the window, counting every scrape (not the 1 s steps only).
      const window = `${Math.max(1, Math.ceil(Date.now() / 1000) - start)}s`;
      const [min] = await instant(`min_over_time(up{job="authorized"}[${window}])`);
      expect(min?.value[1]).toBe('1');
      const [count] = await instant(`count_over_time(up{job="authorized"}[${window}])`);
      expect(Number(count?.value[1])).toBeGreaterThanOrEqual(5);
      expect((await targets()).get('authorized')).toMatchObject({ health: 'up', lastError: '' });
      expect(await certificates.servedFingerprint(port)).toBe(secondPrint);
      console.log(
        `prometheus-tls-auth: rotation window ${start}..${end}: ${range.length} samples of up, all 1; ${count?.value[1]} scrapes`,
      );
    }, 60_000);
  });
});
