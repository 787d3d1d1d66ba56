/**
 * examples/quick-start/pprof-loopback.mjs, run as written: the debug port on every interface
 * without profiles, /debug/pprof on 127.0.0.1 only. The "other interface" is this machine's first
 * non-loopback IPv4 address, as another pod would reach it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { requireFreshDist } from '../helpers/dist';
import { eventually } from '../helpers/eventually';
import { request } from '../helpers/http';
import { freePorts } from '../helpers/ports';

const REPO = path.resolve(__dirname, '..', '..');
const EXAMPLE = path.join(REPO, 'examples', 'quick-start', 'pprof-loopback.mjs');
const outside = Object.values(os.networkInterfaces())
  .flat()
  .find((address) => address !== undefined && address.family === 'IPv4' && !address.internal)?.address;

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('profiles on a loopback listener (examples/quick-start/pprof-loopback.mjs)', () => {
  let child: ChildProcess | undefined;
  let debugPort: number;
  let pprofPort: number;

  beforeAll(async () => {
    requireFreshDist();
    [debugPort, pprofPort] = await freePorts(2);
    child = spawn(process.execPath, [EXAMPLE], {
      cwd: REPO,
      env: { ...process.env, DEBUG_PORT: String(debugPort), PPROF_PORT: String(pprofPort) },
      stdio: 'inherit',
    });
    await eventually(
      async () => (await request(`http://127.0.0.1:${pprofPort}/debug/pprof/`).catch(() => ({ status: 0 }))).status === 200,
      {
        timeoutMs: 15_000,
        what: 'the example to listen',
      },
    );
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('serves profiles on loopback, and not on the debug port', async () => {
    expect((await request(`http://127.0.0.1:${pprofPort}/debug/pprof/heap?debug=1`)).status).toBe(200);
    // With pprof: false the path stays the host's (it may mount a profiler of its own there): here
    // nothing is, so Express answers its own 404.
    for (const path of ['/debug/pprof/', '/debug/pprof/profile?seconds=1', '/debug/pprof/heap']) {
      expect((await request(`http://127.0.0.1:${debugPort}${path}`)).status).toBe(404);
    }
    expect((await request(`http://127.0.0.1:${debugPort}/debug/vars`)).status).toBe(200);
    expect((await request(`http://127.0.0.1:${debugPort}/readyz`)).status).toBe(200);
  });

  (outside === undefined ? it.skip : it)('answers the debug port from another interface, and refuses profiles there', async () => {
    expect((await request(`http://${outside}:${debugPort}/livez`)).status).toBe(200);
    expect(await connects(outside!, pprofPort)).toBe(false);
    expect(await connects('127.0.0.1', pprofPort)).toBe(true);
  });
});
