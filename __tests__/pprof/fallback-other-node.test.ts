import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT, transpileLib } from './helpers';
import { inCI } from '../helpers/peers';

/**
 * The real fallback: v8-profiler-next is built at install for the Node that ran `npm ci`, so under
 * a Node of another major its native addon cannot load (no binary for that ABI) and the router must
 * fall back to the inspector. CI points OTHER_NODE_BIN at a real Node of another major
 * (`bash scripts/fetch-node.sh <major>` fetches one from the npm registry); by default the test
 * looks for Node 22 in node_modules/.cache/node22.
 */
const run = promisify(execFile);
const OTHER_NODE = process.env.OTHER_NODE_BIN ?? join(ROOT, 'node_modules', '.cache', 'node22', 'bin', 'node');
const available = existsSync(OTHER_NODE);
const MISSING = `no Node binary of another major at ${OTHER_NODE}; set OTHER_NODE_BIN (bash scripts/fetch-node.sh 22 prints one)`;
const OWN_MAJOR = process.versions.node.split('.')[0]!;

/** Serves a CPU and a heap profile through a router and prints what it answered as one JSON line. */
const HOST = join(__dirname, 'fixtures', 'other-node-host.js');

interface Summary {
  status: number;
  sampleTypes: string[];
  functions: string[];
  samples: number;
}

interface Result {
  node: string;
  backend: string;
  reason: string;
  indexProfiler: { backend: string; reason: string };
  forcedAddonError: string | null;
  cpu: Summary;
  heap: Summary;
}

const maybe = available || inCI ? it : it.skip;

describe('fallback to node:inspector where the addon cannot load (a Node of another major)', () => {
  let work: string | undefined;
  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  maybe('profiles CPU and heap through the inspector and says why', async () => {
    if (!available) throw new Error(MISSING);
    const { stdout: version } = await run(OTHER_NODE, ['--version']);
    expect(version.trim()).not.toMatch(new RegExp(`^v${OWN_MAJOR}\\.`));

    work = mkdtempSync(join(tmpdir(), 'pprof-other-node-'));
    transpileLib(work);
    const { stdout } = await run(OTHER_NODE, [HOST, join(work, 'lib', 'pprof', 'index.js')], {
      cwd: work,
      env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules'), CONTROLLER_INTROSPECTION_PROFILER: '' },
      timeout: 50_000,
    });
    const result = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Result;

    expect(result.node).toBe(version.trim());
    expect(result.backend).toBe('inspector');
    // The addon is found but its build for the installing Node has no binary for this one's ABI.
    // (Or, where the installing Node could not build it at all, the package itself is missing.)
    expect(result.reason).toMatch(
      /^v8-profiler-next failed to load \(Cannot find module .*(profiler\.node|'v8-profiler-next').*\); fell back to node:inspector$/,
    );
    expect(result.indexProfiler).toEqual({
      backend: 'inspector',
      reason: result.reason,
      startCost: expect.stringMatching(/^starts are cheap: V8 walked the heap once/),
    });
    expect(result.forcedAddonError).toMatch(/^v8-profiler-next was forced by option profiler: 'v8-profiler-next' but failed to load: /);

    expect(result.cpu.status).toBe(200);
    expect(result.cpu.sampleTypes).toEqual(['samples/count', 'cpu/nanoseconds']);
    expect(result.cpu.samples).toBeGreaterThan(0);
    expect(result.cpu.functions).toContain('busyFibonacciForProfile');

    expect(result.heap.status).toBe(200);
    expect(result.heap.sampleTypes).toEqual(['inuse_space/bytes']);
    expect(result.heap.functions).toContain('retainForHeapProfile');
  });
});
