/**
 * watchServingCertificate on a real HTTPS server: certificates made by openssl, signed by one CA
 * the clients trust; the files rotated on disk as a Secret volume rotates them (a new file moved
 * into place), while a keep-alive connection stays open. Then what a check reads: nothing while
 * the files stay as they were (counted on `fs.promises.open` and the file handles' `read`), and
 * nothing of a file that is too large, a named pipe, `/dev/zero`, or one that grows while read.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import fsp, { type FileHandle } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import express from 'express';
import { SETTLE_MS } from '../../lib/util/bounded-file';
import { watchServingCertificate, SERVING_CERTIFICATE_DEFAULTS, type CertificateEventPublisher } from '../../lib/tls/serving-certificate';
import { createIntrospectionState } from '../../lib/state/store';
import { testCertificates, type CertificatePair } from '../helpers/certificates';

const certificates = testCertificates('serving-cert-');
const { dir, caFile, served } = certificates;

let first: CertificatePair;
let second: CertificatePair;

beforeAll(() => {
  first = certificates.leaf('first');
  second = certificates.leaf('second');
});

afterAll(() => certificates.remove());

describe('watchServingCertificate', () => {
  it('publishes its events to a CertificateEventPublisher the host wrote, with no state at all', async () => {
    certificates.install(first);
    const published: Array<[string, string, Readonly<Record<string, unknown>>]> = [];
    const events: CertificateEventPublisher = {
      publishEvent: (type, summary, { details }) => void published.push([type, summary, details]),
    };
    const watch = watchServingCertificate(https.createServer(), events, {
      certFile: served.cert,
      keyFile: served.key,
      checkIntervalMs: 86_400_000,
    });
    try {
      await watch.check();
      certificates.install(second);
      expect(await watch.check()).toBe(true);
      fs.writeFileSync(served.cert, 'not a certificate');
      expect(await watch.check()).toBe(false);
      expect(published.map(([type, summary]) => [type, summary.split(':')[0]])).toEqual([
        ['tls.reloaded', `serving certificate CN=second until ${watch.current.notAfter}`.split(':')[0]],
        ['tls.reload_failed', 'new serving certificate not used'],
      ]);
      expect(published[0]![2]).toEqual({ ...watch.current });
      expect(published[1]![2]).toMatchObject({ certFile: served.cert, keyFile: served.key, error: watch.lastError });
    } finally {
      await watch.close();
    }
  });

  it('serves the new certificate at the next handshake, keeps open connections, and keeps the old one when the new files are bad', async () => {
    certificates.install(first);
    const state = createIntrospectionState({ waitForConfig: false });
    const app = express();
    app.get('/ping', (_req, res) => void res.send('pong'));
    const server = https.createServer(app);
    const errors: string[] = [];
    const watch = watchServingCertificate(server, state, {
      certFile: served.cert,
      keyFile: served.key,
      checkIntervalMs: 100,
      onError: (e) => errors.push(e.message),
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: fs.readFileSync(caFile) });
    const get = (): Promise<{ body: string; socketFingerprint: string }> =>
      new Promise((resolve, reject) => {
        https
          .get({ host: '127.0.0.1', port, path: '/ping', agent }, (res) => {
            // Read while the response holds the socket: it goes back to the agent at the end.
            const socketFingerprint = (res.socket as tls.TLSSocket).getPeerCertificate().fingerprint256;
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ body, socketFingerprint }));
          })
          .on('error', reject);
      });
    try {
      const firstPrint = new X509Certificate(fs.readFileSync(first.cert)).fingerprint256;
      const secondPrint = new X509Certificate(fs.readFileSync(second.cert)).fingerprint256;
      expect(await certificates.servedFingerprint(port)).toBe(firstPrint);
      expect(watch.current).toMatchObject({ subject: 'CN=first', fingerprint256: firstPrint });
      const before = await get();
      expect(before).toEqual({ body: 'pong', socketFingerprint: firstPrint });

      // Each change is made while no check runs (one the timer started would look at the files
      // meanwhile, half rotated), and the check that follows is a new one.
      await watch.check();
      certificates.install(second);
      expect(await watch.check()).toBe(true);
      expect(watch.current.fingerprint256).toBe(secondPrint);
      expect(await certificates.servedFingerprint(port)).toBe(secondPrint);
      // The keep-alive connection opened before the rotation is still open and still answers.
      expect(await get()).toEqual({ body: 'pong', socketFingerprint: firstPrint });
      const events = state.readEvents({ type: 'tls.' }, 10).events.map((e) => e.type);
      expect(events).toEqual(['tls.reloaded']);

      // A key that does not belong to the certificate: the second certificate stays in service.
      await watch.check();
      fs.copyFileSync(first.key, served.key);
      expect(await watch.check()).toBe(false);
      expect(watch.lastError).toBe('the private key does not belong to the certificate');
      expect(await certificates.servedFingerprint(port)).toBe(secondPrint);
      // Garbage in the certificate file, and a missing file: the same.
      await watch.check();
      fs.writeFileSync(served.cert, 'not a certificate');
      expect(await watch.check()).toBe(false);
      expect(watch.lastError).toMatch(/^the certificate file holds no PEM certificate/);
      await watch.check();
      fs.rmSync(served.cert);
      expect(await watch.check()).toBe(false);
      expect(watch.lastError).toMatch(/ENOENT/);
      expect(await certificates.servedFingerprint(port)).toBe(secondPrint);
      expect(errors).toHaveLength(3);
      expect(state.readEvents({ type: 'tls.reload_failed' }, 10).events).toHaveLength(3);

      // Fixed on disk: the timer finds it without being asked.
      certificates.install(first);
      const deadline = Date.now() + 5000;
      while (watch.current.fingerprint256 !== firstPrint && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(watch.current.fingerprint256).toBe(firstPrint);
      expect(watch.lastError).toBeUndefined();
      expect(await certificates.servedFingerprint(port)).toBe(firstPrint);
    } finally {
      await watch.close();
      agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('throws at the call on a bad first pair, a wrong server or a wrong option', () => {
    const server = https.createServer();
    expect(() => watchServingCertificate(server, undefined, { certFile: first.cert, keyFile: second.key })).toThrow(
      'the private key does not belong to the certificate',
    );
    expect(() => watchServingCertificate(server, undefined, { certFile: path.join(dir, 'none.crt'), keyFile: first.key })).toThrow(
      /ENOENT/,
    );
    expect(() => watchServingCertificate({} as never, undefined, { certFile: first.cert, keyFile: first.key })).toThrow(
      'watchServingCertificate: the first argument must be a node:https or node:tls server (with setSecureContext)',
    );
    expect(() =>
      watchServingCertificate(server, undefined, { certFile: first.cert, keyFile: first.key, checkIntervalMS: 5 } as never),
    ).toThrow('did you mean "checkIntervalMs"');
    expect(() => watchServingCertificate(server, undefined, { keyFile: first.key } as never)).toThrow(
      'watchServingCertificate: certFile is required',
    );
    expect(() => watchServingCertificate(server, { certFile: first.cert, keyFile: first.key } as never, undefined as never)).toThrow(
      new TypeError(
        'watchServingCertificate: the second argument is the state (or undefined); options come third: watchServingCertificate(server, state, { certFile, keyFile })',
      ),
    );
    expect(() => watchServingCertificate(server, {} as never, { certFile: first.cert, keyFile: first.key })).toThrow(
      'watchServingCertificate: the second argument must be the IntrospectionState (from createIntrospectionState()), got an empty object',
    );
    expect(() => watchServingCertificate(server, undefined, { certFile: first.cert, keyFile: first.key, maxFileBytes: 100 })).toThrow(
      'watchServingCertificate: maxFileBytes must be',
    );
    expect(SERVING_CERTIFICATE_DEFAULTS).toEqual({
      certFile: '',
      keyFile: '',
      checkIntervalMs: 10_000,
      maxFileBytes: 262_144,
      maxChainCertificates: 10,
    });
  });

  it('refuses at the call a certificate that is a named pipe or too large, without blocking on it', () => {
    const server = https.createServer();
    const fifo = path.join(dir, 'call.fifo');
    execFileSync('mkfifo', [fifo]);
    expect(() => watchServingCertificate(server, undefined, { certFile: fifo, keyFile: first.key })).toThrow(
      `the certificate file ${fifo} is a named pipe (FIFO), not a regular file`,
    );
    const large = path.join(dir, 'call-large.crt');
    fs.writeFileSync(large, Buffer.alloc(262_145, 'A'));
    expect(() => watchServingCertificate(server, undefined, { certFile: first.cert, keyFile: large })).toThrow(
      `the key file ${large} is 262145 bytes, over maxFileBytes (262144)`,
    );
  });
});

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Counts what checks open and read, by path: every `fs.promises.open` of a watched file, and the
 * bytes that `read` on its handle returned. `onOpen` runs on each handle before it is returned.
 */
async function countReads(files: readonly string[], onOpen?: (file: string, handle: FileHandle) => void) {
  const realOpen = fsp.open;
  const handles = new Map<FileHandle, string>();
  const opened: string[] = [];
  const bytes = new Map<string, number>();
  const openSpy = jest.spyOn(fsp, 'open').mockImplementation(async (...args: Parameters<typeof fsp.open>) => {
    const handle = await realOpen(...args);
    const file = String(args[0]);
    if (files.includes(file)) {
      opened.push(file);
      handles.set(handle, file);
      onOpen?.(file, handle);
    }
    return handle;
  });
  const probe = await realOpen(files[0]);
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const realRead = proto.read;
  const readSpy = jest.spyOn(proto, 'read').mockImplementation(async function (this: FileHandle, ...args: unknown[]) {
    const result = await (realRead as (...a: unknown[]) => ReturnType<FileHandle['read']>).apply(this, args);
    const file = handles.get(this);
    if (file !== undefined) bytes.set(file, (bytes.get(file) ?? 0) + result.bytesRead);
    return result;
  } as FileHandle['read']);
  return {
    opened,
    bytes,
    proto,
    /** Forgets what was counted. */
    reset: () => {
      opened.length = 0;
      bytes.clear();
    },
    restore: () => {
      openSpy.mockRestore();
      readSpy.mockRestore();
    },
  };
}

describe('watchServingCertificate: what a check reads', () => {
  it('reads the files only when their identity changes: a Secret volume swapping ..data, a touch, not a check alone', async () => {
    // A Secret volume as the kubelet lays it out: the files are links through `..data`, a link to
    // a directory of this version; a new version is a new directory and `..data` renamed over.
    const volume = fs.mkdtempSync(path.join(dir, 'volume-'));
    const publish = (pair: CertificatePair, version: string): void => {
      fs.mkdirSync(path.join(volume, version));
      fs.copyFileSync(pair.cert, path.join(volume, version, 'tls.crt'));
      fs.copyFileSync(pair.key, path.join(volume, version, 'tls.key'));
      fs.symlinkSync(version, path.join(volume, '..data_tmp'));
      fs.renameSync(path.join(volume, '..data_tmp'), path.join(volume, '..data'));
    };
    publish(first, '..v1');
    const certFile = path.join(volume, 'tls.crt');
    const keyFile = path.join(volume, 'tls.key');
    fs.symlinkSync('..data/tls.crt', certFile);
    fs.symlinkSync('..data/tls.key', keyFile);
    const state = createIntrospectionState({ waitForConfig: false });
    const watch = watchServingCertificate(https.createServer(), state, { certFile, keyFile, checkIntervalMs: 86_400_000 });
    const reads = await countReads([certFile, keyFile]);
    try {
      await sleep(SETTLE_MS + 50);
      // The first check reads once (the call's read is not trusted as a look), then never again.
      expect(await watch.check()).toBe(false);
      expect(reads.opened.sort()).toEqual([certFile, keyFile]);
      reads.reset();
      for (let i = 0; i < 3; i++) expect(await watch.check()).toBe(false);
      expect(reads.opened).toEqual([]);

      // The swap: read at once, put in service; the old version removed as the kubelet does.
      publish(second, '..v2');
      fs.rmSync(path.join(volume, '..v1'), { recursive: true });
      expect(await watch.check()).toBe(true);
      expect(watch.current.subject).toBe('CN=second');
      expect(reads.opened.sort()).toEqual([certFile, keyFile]);
      // Written a moment ago: a write in the same tick of the file system's clock would not show,
      // so it is read again (the same bytes: no reload) until it is older than SETTLE_MS.
      reads.reset();
      expect(await watch.check()).toBe(false);
      expect(reads.opened).toHaveLength(2);
      await sleep(SETTLE_MS + 50);
      expect(await watch.check()).toBe(false);
      reads.reset();
      expect(await watch.check()).toBe(false);
      expect(reads.opened).toEqual([]);

      // A touch is a new identity: read again, and the same bytes put nothing in service.
      const later = new Date(Date.now() + 60_000);
      fs.utimesSync(path.join(volume, '..v2', 'tls.key'), later, later);
      expect(await watch.check()).toBe(false);
      expect(reads.opened).toHaveLength(2);
      expect(state.readEvents({ type: 'tls.' }, 10).events.map((e) => e.type)).toEqual(['tls.reloaded']);
      expect(watch.lastError).toBeUndefined();
    } finally {
      reads.restore();
      await watch.close();
    }
  });

  it('refuses a file too large, a named pipe, /dev/zero or a file that grows while read, keeping the pair in service', async () => {
    certificates.install(first);
    const errors: string[] = [];
    const server = https.createServer();
    const watch = watchServingCertificate(server, undefined, {
      certFile: served.cert,
      keyFile: served.key,
      checkIntervalMs: 86_400_000,
      maxFileBytes: 4096,
      maxChainCertificates: 4,
      onError: (e) => errors.push(e.message),
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const firstPrint = new X509Certificate(fs.readFileSync(first.cert)).fingerprint256;
    let grow: ((file: string, handle: FileHandle) => void) | undefined;
    const reads = await countReads([served.cert, served.key], (file, handle) => grow?.(file, handle));
    /** Puts `write`'s file in place of the served certificate, as a rename. */
    const replace = (write: (file: string) => void): void => {
      const next = `${served.cert}.next`;
      fs.rmSync(next, { force: true });
      write(next);
      fs.renameSync(next, served.cert);
    };
    /** A check refuses what is in place with `message`, without opening it, and the next check does nothing. */
    const refused = async (message: string): Promise<void> => {
      reads.reset();
      const reported = errors.length;
      expect(await watch.check()).toBe(false);
      expect(watch.lastError).toBe(message);
      expect(errors).toHaveLength(reported + 1);
      expect(reads.opened).toEqual([]);
      expect(await watch.check()).toBe(false);
      expect(errors).toHaveLength(reported + 1);
      expect(watch.current.fingerprint256).toBe(firstPrint);
    };
    try {
      replace((file) => fs.writeFileSync(file, Buffer.alloc(4097, 'A')));
      await refused(`the certificate file ${served.cert} is 4097 bytes, over maxFileBytes (4096)`);
      // 50 MB, sparse: instant to make, and never read.
      replace((file) => {
        fs.writeFileSync(file, '');
        fs.truncateSync(file, 50 * 2 ** 20);
      });
      await refused(`the certificate file ${served.cert} is 52428800 bytes, over maxFileBytes (4096)`);
      replace((file) => execFileSync('mkfifo', [file]));
      await refused(`the certificate file ${served.cert} is a named pipe (FIFO), not a regular file`);
      replace((file) => fs.symlinkSync('/dev/zero', file));
      await refused(`the certificate file ${served.cert} is a character device, not a regular file`);
      expect(await certificates.servedFingerprint(port)).toBe(firstPrint);

      // A file that grows past the bound between the look and the open: refused on the open
      // descriptor's size, without a byte read.
      replace((file) => fs.copyFileSync(first.cert, file));
      grow = (file) => {
        if (file === served.cert) fs.appendFileSync(served.cert, Buffer.alloc(5000, 'A'));
      };
      reads.reset();
      expect(await watch.check()).toBe(false);
      expect(watch.lastError).toBe(
        `the certificate file ${served.cert} is ${fs.statSync(served.cert).size} bytes, over maxFileBytes (4096)`,
      );
      expect(reads.bytes.get(served.cert) ?? 0).toBe(0);

      // A file that grows while it is read: at most its size and one byte are read, and refused.
      replace((file) => fs.copyFileSync(first.cert, file));
      const size = fs.statSync(served.cert).size;
      grow = undefined;
      const realStat = reads.proto.stat;
      let grown = false;
      const statSpy = jest.spyOn(reads.proto, 'stat').mockImplementation(async function (this: FileHandle, ...args: unknown[]) {
        const stats = await (realStat as (...a: unknown[]) => ReturnType<FileHandle['stat']>).apply(this, args);
        // After the size is taken, before the read.
        if (!grown && Number(stats.size) === size) {
          grown = true;
          fs.appendFileSync(served.cert, Buffer.alloc(100, 'A'));
        }
        return stats;
      } as FileHandle['stat']);
      reads.reset();
      try {
        expect(await watch.check()).toBe(false);
      } finally {
        statSpy.mockRestore();
      }
      expect(watch.lastError).toBe(`the certificate file ${served.cert} changed while it was read`);
      expect(reads.bytes.get(served.cert)).toBe(size + 1);

      // A chain of more PEM blocks than maxChainCertificates: read, and refused before it is parsed.
      const ca = fs.readFileSync(caFile);
      replace((file) => fs.writeFileSync(file, Buffer.concat([fs.readFileSync(first.cert), ca, ca, ca, ca])));
      expect(await watch.check()).toBe(false);
      expect(watch.lastError).toBe(`the certificate file ${served.cert} holds 5 PEM blocks, over maxChainCertificates (4)`);
      expect(watch.current.fingerprint256).toBe(firstPrint);

      // The key file is bounded alike; and a good pair is put in service again.
      fs.copyFileSync(first.cert, served.cert);
      fs.writeFileSync(served.key, Buffer.alloc(8000, 'A'));
      expect(await watch.check()).toBe(false);
      expect(watch.lastError).toBe(`the key file ${served.key} is 8000 bytes, over maxFileBytes (4096)`);
      certificates.install(second);
      expect(await watch.check()).toBe(true);
      expect(watch.lastError).toBeUndefined();
      expect(await certificates.servedFingerprint(port)).toBe(new X509Certificate(fs.readFileSync(second.cert)).fingerprint256);
    } finally {
      reads.restore();
      await watch.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("keeps the server's own TLS settings at every reload: client certificates against its ca, its minVersion", async () => {
    certificates.install(first);
    const client = certificates.leaf('client');
    const ca = fs.readFileSync(caFile);
    const app = express();
    app.get('/ping', (_req, res) => void res.send('pong'));
    const server = https.createServer({ requestCert: true, rejectUnauthorized: true, ca, minVersion: 'TLSv1.3' }, app);
    const watch = watchServingCertificate(server, undefined, { certFile: served.cert, keyFile: served.key, checkIntervalMs: 60_000 });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    /** What a new connection gets: `ok TLSv1.3`, or the error's code. */
    const connect = (options: tls.ConnectionOptions): Promise<string> =>
      new Promise((resolve) => {
        const get = https.get({ host: '127.0.0.1', port, path: '/ping', ca, agent: false, ...options }, (res) => {
          const version = (res.socket as tls.TLSSocket).getProtocol();
          res.resume();
          res.on('end', () => resolve(`ok ${version ?? ''}`));
        });
        get.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
        get.setTimeout(5000, () => get.destroy(Object.assign(new Error('no answer'), { code: 'TIMEOUT' })));
      });
    const withCert = { cert: fs.readFileSync(client.cert), key: fs.readFileSync(client.key) };
    const before = [await connect(withCert), await connect({}), await connect({ ...withCert, maxVersion: 'TLSv1.2' })];
    expect(before[0]).toBe('ok TLSv1.3');
    expect(before[1]).not.toMatch(/^ok/); // no client certificate
    expect(before[2]).not.toMatch(/^ok/); // below the server's minVersion
    certificates.install(second);
    expect(await watch.check()).toBe(true);
    const after = [await connect(withCert), await connect({}), await connect({ ...withCert, maxVersion: 'TLSv1.2' })];
    expect(after.map((a) => a.startsWith('ok'))).toEqual(before.map((b) => b.startsWith('ok')));
    expect(after[0]).toBe('ok TLSv1.3');
    await watch.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }, 30_000);
});
