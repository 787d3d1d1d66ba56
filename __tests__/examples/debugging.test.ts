/**
 * The commands the guides run against the example controller (`<!-- run: example-app -->` blocks:
 * the debugging workflows of docs/debugging.md, the profiles of docs/profiling.md, the scrape of
 * docs/metrics.md), run as written (with the example's ports put in for 8080 and 9090) in a
 * scratch directory, against the example controller with validation and deployments failing often
 * enough that every variable has content. A command passes when it exits 0 and prints something
 * that is not a JSON error (or, with `-o <file>`, writes such a file); a watch is read for a few
 * seconds and must have streamed a deployment.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startExample, type ExampleApp } from '../helpers/example-app';
import { blocksRunBy, shellCommands } from '../helpers/markdown';

function sh(command: string, cwd: string, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', command], { cwd, timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (((err as NodeJS.ErrnoException & { code?: number }).code as unknown as number) ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('the guides: commands run against the example controller', () => {
  let app: ExampleApp;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ci-guide-commands-'));
  beforeAll(async () => {
    app = await startExample({
      simulation: { reconcileIntervalMs: 100, validationFailureRate: 0.3, deployFailureRate: 0.3, cpuBurnMs: 5 },
    });
    // Enough cycles for failures of both kinds and a success.
    await app.waitForLog((l) => l['msg'] === 'became leader');
    await new Promise((r) => setTimeout(r, 2500));
  });
  afterAll(async () => {
    await app.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  const commands = blocksRunBy('example-app').flatMap(shellCommands);
  it('has the workflows', () => {
    expect(commands.length).toBeGreaterThanOrEqual(18);
    expect(commands.some((c) => c.includes('?watch=1'))).toBe(true);
  });

  it.each(commands.map((c) => [c]))('%s', async (command) => {
    const debug = new URL(app.debugUrl!).host;
    const metrics = new URL(app.metricsUrl!).host;
    let run = command.replaceAll('localhost:8080', debug).replaceAll('localhost:9090', metrics);
    const watching = run.includes('watch=1');
    if (watching) run = run.replace('curl -sN', 'curl -sN --max-time 4');
    const result = await sh(run, scratch, 60_000);
    if (watching) {
      // curl's exit 28 is its own --max-time: the stream stayed open, as it should.
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 28, stderr: '' });
      expect(result.stdout).toMatch(/"type":"deployment\./);
      return;
    }
    expect({ code: result.code, stderr: result.stderr.replace(/^(Fetching|Saved|Type|Time|Duration|Showing|Dropped).*\n/gm, '') }).toEqual({
      code: 0,
      stderr: '',
    });
    // A command that saves the answer (`curl -o file`) prints nothing: the file is the answer.
    const saved = /\s-o\s+(\S+)/.exec(run)?.[1];
    const answer = saved === undefined ? result.stdout : fs.readFileSync(path.join(scratch, saved), 'utf8');
    expect(answer.trim()).not.toBe('');
    expect(answer).not.toMatch(/^\{"error"/);
  });
});
