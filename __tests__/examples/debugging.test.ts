/**
 * The README's "Debugging a controller" workflows, run as written (with the example's ports put in
 * for 8080 and 9090) against the example controller, with validation and deployments failing often
 * enough that every variable has content. A command passes when it exits 0 and prints something
 * that is not a JSON error; a watch is read for a few seconds and must have streamed a deployment.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startExample, type ExampleApp } from '../helpers/example-app';

const README = fs.readFileSync(path.resolve(__dirname, '..', '..', 'README.md'), 'utf8');

function debuggingCommands(): string[] {
  const start = README.indexOf('## Debugging a controller');
  const end = README.indexOf('\n## ', start + 1);
  const section = README.slice(start, end);
  const commands: string[] = [];
  for (const block of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const line of block[1]!.split('\n')) if (line.trim() !== '' && !line.trim().startsWith('#')) commands.push(line);
  }
  return commands;
}

function sh(command: string, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', command], { timeout: timeoutMs, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? (((err as NodeJS.ErrnoException & { code?: number }).code as unknown as number) ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('README: debugging a controller', () => {
  let app: ExampleApp;
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
  });

  const commands = debuggingCommands();
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
    const result = await sh(run, 60_000);
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
    expect(result.stdout.trim()).not.toBe('');
    expect(result.stdout).not.toMatch(/^\{"error"/);
  });
});
