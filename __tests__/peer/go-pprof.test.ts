import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { promisify } from 'node:util';
import express from 'express';
import { createPprofRouter } from '../../lib/pprof';
import { requireFreshDist } from '../helpers/dist';
import { startExample } from '../helpers/example-app';
import { listen } from '../helpers/http';
import { releaseRetained, retainForHeapProfile, startBusyLoop } from '../pprof/fixtures/workload';
import { GO, goAvailable, goPprofHome, goToolEnv, inCI } from '../helpers/peers';

/**
 * Peer test: the real `go tool pprof` (Debian package golang-go) fetches our endpoints over HTTP
 * and must decode them and name our functions. Runs asynchronously: the server lives in this
 * process, so a synchronous child would deadlock it.
 */
const run = promisify(execFile);

/** The app under test: a busy function burning CPU and a function holding heap. */
async function startProfiledApp(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const router = createPprofRouter(undefined, { heapSamplingIntervalBytes: 16 * 1024 });
  const app = express();
  app.use('/debug/pprof', router);
  const served = await listen(app);
  const stopBusy = startBusyLoop();
  retainForHeapProfile(4);
  return {
    baseUrl: `${served.origin}/debug/pprof`,
    async close(): Promise<void> {
      stopBusy();
      releaseRetained();
      await router.close();
      await served.close();
    },
  };
}

/**
 * The example controller with expensive rendering: `renderLoadBalancerConfig` burns CPU on every
 * cycle and `retainRenderHistory` keeps the rendered configurations on the heap.
 */
async function startExampleApp(): Promise<{ baseUrl: string; close(): Promise<void> }> {
  // It runs the built package.
  requireFreshDist();
  const app = await startExample({
    simulation: { reconcileIntervalMs: 20, cpuBurnMs: 30, renderHistory: 400 },
    profiling: { heapSamplingIntervalBytes: 4096 },
  });
  return {
    baseUrl: `${app.debugUrl}/debug/pprof`,
    async close(): Promise<void> {
      await app.stop();
    },
  };
}

for (const [subject, start, hot] of [
  ['a test server', startProfiledApp, { cpu: 'busyFibonacciForProfile', heap: 'retainForHeapProfile' }],
  ['the example controller app', startExampleApp, { cpu: 'renderLoadBalancerConfig', heap: 'retainRenderHistory' }],
] as const) {
  describe(`go tool pprof against ${subject}`, () => {
    let app: Awaited<ReturnType<typeof start>> | undefined;
    let home: string | undefined;
    let haveGo = false;

    beforeAll(async () => {
      haveGo = await goAvailable();
      if (!haveGo) return;
      home = goPprofHome('go-pprof-');
      app = await start();
    });

    afterAll(async () => {
      await app?.close();
      if (home) rmSync(home, { recursive: true, force: true });
    });

    async function pprofTop(path: string): Promise<string> {
      if (!haveGo || !app || !home) {
        if (inCI)
          throw new Error(`"${GO} version" failed: install golang-go (apt-get install -y --no-install-recommends golang-go) or set GO_BIN`);
        return '';
      }
      const { stdout } = await run(GO, ['tool', 'pprof', '-top', `${app.baseUrl}/${path}`], {
        env: goToolEnv(GO, home),
        timeout: 45_000,
      });
      return stdout;
    }

    const maybe = (name: string, fn: () => Promise<void>): void => {
      it(name, async () => {
        if (!haveGo && !inCI) {
          console.warn(`skipped: ${GO} not found (install golang-go)`);
          return;
        }
        await fn();
      });
    };

    maybe('reads a CPU profile over ?seconds=2 and shows the busy function', async () => {
      const out = await pprofTop('profile?seconds=2');
      expect(out).toMatch(/^Type: cpu$/m);
      expect(out).toMatch(/Duration: 2(\.\d+)?s/);
      expect(out).toMatch(new RegExp(`\\s${hot.cpu}$`, 'm'));
    });

    maybe('reads the heap profile and shows the retaining function', async () => {
      // gc=1: a plain read also shows garbage not collected yet; the retaining function is what survives.
      const out = await pprofTop('heap?gc=1');
      expect(out).toMatch(/^Type: inuse_space$/m);
      expect(out).toMatch(new RegExp(`\\s${hot.heap}$`, 'm'));
    });

    maybe('reads a delta heap profile over ?seconds=1', async () => {
      const out = await pprofTop('heap?seconds=1');
      expect(out).toMatch(/^Type: inuse_space$/m);
    });

    maybe('reads the block and mutex analogs', async () => {
      expect(await pprofTop('block')).toMatch(/^Type: delay$/m);
      expect(await pprofTop('mutex')).toMatch(/^Type: (contentions|delay)$/m);
    });

    maybe('reads the goroutine analog and shows the listening server', async () => {
      const out = await pprofTop('goroutine');
      expect(out).toMatch(/^Type: resources$/m);
      expect(out).toMatch(/\sTCPServerWrap$/m);
    });
  });
}

describe('go tool pprof reads the allocs profile', () => {
  it('names the churning function in alloc_space, whole and as a delta', async () => {
    if (!(await goAvailable())) {
      if (inCI) throw new Error(`"${GO} version" failed: install golang-go`);
      return;
    }
    const router = createPprofRouter(undefined, { heapSamplingIntervalBytes: 16 * 1024, heapSamples: 'allocations' });
    const app = express();
    app.use('/debug/pprof', router);
    const served = await listen(app);
    const home = goPprofHome('go-pprof-');
    // Allocated and dropped at once: only an allocation profile can see it.
    function churnForAllocs(): number {
      let last = 0;
      for (let i = 0; i < 256; i++) last = new Array<number>(8192).fill(i).length;
      return last;
    }
    const churn = setInterval(churnForAllocs, 20);
    // Once now as well: a cached `go tool pprof` can fetch before the first tick.
    churnForAllocs();
    try {
      const base = `${served.origin}/debug/pprof`;
      const env = goToolEnv(GO, home);
      for (const path of ['allocs', 'allocs?seconds=1']) {
        const { stdout } = await run(GO, ['tool', 'pprof', '-top', `${base}/${path}`], { env, timeout: 45_000 });
        expect(stdout).toMatch(/^Type: alloc_space$/m);
        expect(stdout).toMatch(/\schurnForAllocs$/m);
      }
    } finally {
      clearInterval(churn);
      await router.close();
      await served.close();
      rmSync(home, { recursive: true, force: true });
    }
  }, 120_000);
});
