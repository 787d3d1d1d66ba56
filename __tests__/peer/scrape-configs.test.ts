/**
 * Peer test of the shipped continuous-profiling configurations: examples/monitoring/
 * alloy-pyroscope-scrape.alloy (Grafana Alloy's pyroscope.scrape) and examples/monitoring/parca.yaml
 * (Parca). Alloy and Parca cannot be built here, so each file is parsed (YAML for Parca, the
 * profile blocks of Alloy's configuration with a small parser), its enabled profiles and paths are
 * checked against the router's catalog, and every enabled path, requested as the scraper requests
 * it, must answer 200 application/octet-stream on the example controller (a default host: default
 * pprof options) with the sample types the scraper needs, as the real `go tool pprof -raw` reads
 * them. What the scrapers expect was read in their sources (see the comments of the two files).
 */
import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { PROFILE_NAMES } from '../../lib/pprof/catalog';
import { requireFreshDist } from '../helpers/dist';
import { startExample, type ExampleApp } from '../helpers/example-app';
import { request } from '../helpers/http';
import { GO, goAvailable, goPprofHome, goToolEnv, inCI } from '../helpers/peers';
import { ROOT, decodePprof } from '../pprof/helpers';

const run = promisify(execFile);
const ALLOY_FILE = 'examples/monitoring/alloy-pyroscope-scrape.alloy';
const PARCA_FILE = 'examples/monitoring/parca.yaml';

/** One profile a scraper asks for: its name in the scraper's configuration, and the request. */
interface Scrape {
  profile: string;
  path: string;
  query: string;
}

/** Alloy's `profile.<name> { enabled = …  path = "…"  delta = … }` blocks of `profiling_config`. */
function alloyProfiles(text: string): Map<string, { enabled: boolean; path: string; delta: boolean }> {
  const code = text.replace(/\/\/.*$/gm, '');
  const blocks = new Map<string, { enabled: boolean; path: string; delta: boolean }>();
  for (const [, name, body] of code.matchAll(/\bprofile\.(\w+)\s*\{([^{}]*)\}/g)) {
    const attr = (key: string): string | undefined => new RegExp(`^\\s*${key}\\s*=\\s*(.+?)\\s*$`, 'm').exec(body!)?.[1];
    const path = attr('path');
    blocks.set(name!, {
      enabled: attr('enabled') === 'true',
      path: path ? (JSON.parse(path) as string) : '',
      delta: attr('delta') === 'true',
    });
  }
  return blocks;
}

/** What each scraper needs of each profile it enables. */
const NEEDED: Readonly<Record<string, readonly string[]>> = {
  // Go's CPU profile types.
  process_cpu: ['samples/count', 'cpu/nanoseconds'],
  // On /heap: the live heap, stored as it is (Alloy differences only alloc_objects/alloc_space).
  memory: ['inuse_space/bytes'],
  goroutine: ['resources/count'],
  // Alloy differences these two, by these names.
  block: ['contentions/count', 'delay/nanoseconds'],
};

const ENABLED = ['block', 'goroutine', 'memory', 'process_cpu'];

function alloyScrapes(): Scrape[] {
  const text = readFileSync(join(ROOT, ALLOY_FILE), 'utf8');
  const interval = /^\s*scrape_interval\s*=\s*"(\d+)s"/m.exec(text)?.[1];
  expect(interval).toBe('15');
  const profiles = alloyProfiles(text);
  // Every block Alloy knows is written out, so no default is left enabled by omission.
  expect([...profiles.keys()].sort()).toEqual(
    [
      'block',
      'fgprof',
      'godeltaprof_block',
      'godeltaprof_memory',
      'godeltaprof_mutex',
      'goroutine',
      'memory',
      'mutex',
      'process_cpu',
    ].sort(),
  );
  const enabled = [...profiles].filter(([, p]) => p.enabled);
  expect(enabled.map(([name]) => name).sort()).toEqual(ENABLED);
  // `delta` makes Alloy add ?seconds=<interval - 1>: the CPU profile's length, and nothing else's.
  expect(enabled.filter(([, p]) => p.delta).map(([name]) => name)).toEqual(['process_cpu']);
  return enabled.map(([profile, p]) => ({ profile, path: p.path, query: p.delta ? `seconds=${Number(interval) - 1}` : '' }));
}

interface ParcaJob {
  job_name: string;
  scrape_interval: string;
  params?: Record<string, string[]>;
  static_configs: Array<{ targets: string[] }>;
  profiling_config: { pprof_config: Record<string, { enabled: boolean; path?: string; delta?: boolean }> };
}

function parcaScrapes(): Scrape[] {
  const config = yaml.load(readFileSync(join(ROOT, PARCA_FILE), 'utf8')) as { scrape_configs: ParcaJob[] };
  const scrapes: Scrape[] = [];
  for (const job of config.scrape_configs) {
    expect(job.scrape_interval).toBe('15s');
    // Parca's defaults enable these five: each job says what it does with every one.
    expect(Object.keys(job.profiling_config.pprof_config).sort()).toEqual(['block', 'goroutine', 'memory', 'mutex', 'process_cpu']);
    for (const [profile, p] of Object.entries(job.profiling_config.pprof_config)) {
      if (!p.enabled) continue;
      // `delta` adds ?seconds=<interval>: a CPU profile that long would still run when the next
      // scrape asks (503); the CPU job asks for 14 s through params instead.
      expect(p.delta).toBe(false);
      const query = new URLSearchParams(Object.entries(job.params ?? {}).flatMap(([k, vs]) => vs.map((v) => [k, v]))).toString();
      scrapes.push({ profile, path: p.path!, query });
    }
  }
  expect(scrapes.map((s) => s.profile).sort()).toEqual(ENABLED);
  return scrapes;
}

describe('the shipped scrape configurations', () => {
  it('enable the same paths, each a profile the router serves, and leave mutex (always empty) off', () => {
    const alloy = alloyScrapes();
    const parca = parcaScrapes();
    const key = (s: Scrape): string => `${s.profile} ${s.path}?${s.query}`;
    expect(parca.map(key).sort()).toEqual(alloy.map(key).sort());
    for (const scrape of alloy) {
      const name = /^\/debug\/pprof\/(\w+)$/.exec(scrape.path)?.[1];
      expect(PROFILE_NAMES).toContain(name);
    }
    expect(alloy.find((s) => s.profile === 'process_cpu')).toEqual({
      profile: 'process_cpu',
      path: '/debug/pprof/profile',
      query: 'seconds=14',
    });
    expect(alloy.find((s) => s.profile === 'memory')?.path).toBe('/debug/pprof/heap');
  });
});

/** The sample types `go tool pprof -raw` lists for a saved profile. */
async function rawSampleTypes(file: string, home: string): Promise<string[]> {
  const { stdout } = await run(GO, ['tool', 'pprof', '-raw', file], { env: goToolEnv(GO, home), timeout: 60_000 });
  const lines = stdout.split('\n');
  const at = lines.indexOf('Samples:');
  expect(at).toBeGreaterThan(-1);
  return lines[at + 1]!.trim().split(/\s+/);
}

describe('every enabled path on the example controller (a default host), as go tool pprof reads it', () => {
  let app: ExampleApp | undefined;
  let home = '';
  let haveGo = false;

  beforeAll(async () => {
    haveGo = await goAvailable();
    if (!haveGo) {
      if (inCI) throw new Error(`"${GO} version" failed: install golang-go or set GO_BIN`);
      return;
    }
    requireFreshDist();
    home = goPprofHome('scrape-configs-');
    // Default pprof options: the example sets none that the scraped profiles depend on.
    app = await startExample({ simulation: { reconcileIntervalMs: 20, cpuBurnMs: 5 } });
  }, 60_000);

  afterAll(async () => {
    await app?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('answers 200 application/octet-stream with the sample types the scrapers need', async () => {
    if (!app) return console.warn(`skipped: ${GO} not found (install golang-go)`);
    const scrapes = [...alloyScrapes(), ...parcaScrapes()];
    const unique = new Map(scrapes.map((s) => [`${s.path}?${s.query}`, s]));
    // Concurrently, as a scraper's jobs run: the 14 s CPU profile beside the others.
    await Promise.all(
      [...unique].map(async ([url, scrape], i) => {
        const res = await request(`${app!.debugUrl}${url}`, { timeoutMs: 40_000 });
        expect({ url, status: res.status, type: res.headers['content-type'] }).toEqual({
          url,
          status: 200,
          type: 'application/octet-stream',
        });
        const file = join(home, `${scrape.profile}-${i}.pb.gz`);
        writeFileSync(file, res.body);
        expect({ url, types: await rawSampleTypes(file, home) }).toEqual({ url, types: NEEDED[scrape.profile] });
        // Alloy merges the samples of memory, block and mutex profiles, and takes their differences,
        // by identity: the sequence of their locations' addresses, and their labels. Distinct
        // samples must keep distinct identities.
        const profile = decodePprof(res.body);
        const addressOf = new Map(profile.location.map((l) => [Number(l.id), Number(l.address)]));
        const identities = profile.sample.map((sample) =>
          JSON.stringify([sample.locationId.map((id) => addressOf.get(Number(id))), sample.label.map((l) => [l.key, l.str, l.num])]),
        );
        expect([...addressOf.values()].filter((address) => address === 0)).toEqual([]);
        expect(new Set(identities).size).toBe(identities.length);
      }),
    );
  }, 120_000);

  it('answers block with cumulative values, so the difference of two scrapes is the time between', async () => {
    if (!app) return;
    const values = async (): Promise<number[]> => {
      const file = join(home, `block-${Date.now()}.pb.gz`);
      writeFileSync(file, (await request(`${app!.debugUrl}/debug/pprof/block`)).body);
      const { stdout } = await run(GO, ['tool', 'pprof', '-raw', file], { env: goToolEnv(GO, home), timeout: 60_000 });
      const sample = /^Samples:\n.*\n\s*(\d+)\s+(\d+):/m.exec(stdout);
      expect(sample).not.toBeNull();
      return [Number(sample![1]), Number(sample![2])];
    };
    const [count1, delay1] = await values();
    await new Promise((r) => setTimeout(r, 500));
    const [count2, delay2] = await values();
    expect(count2).toBeGreaterThan(count1!);
    expect(delay2).toBeGreaterThanOrEqual(delay1!);
  }, 60_000);

  it('gives the binary form for debug=0 as for no debug, and answers /allocs 404 saying why (live heap kept)', async () => {
    if (!app) return;
    for (const name of ['goroutine', 'block', 'mutex', 'heap']) {
      const res = await request(`${app.debugUrl}/debug/pprof/${name}?debug=0`);
      expect({ name, status: res.status, type: res.headers['content-type'] }).toEqual({
        name,
        status: 200,
        type: 'application/octet-stream',
      });
    }
    const allocs = await request(`${app.debugUrl}/debug/pprof/allocs`);
    expect(allocs.status).toBe(404);
    expect(String(allocs.json().error)).toMatch(/keeps live objects \(served by \/heap\)/);
  });
});
