/**
 * watchServingCertificate on a real HTTPS server: certificates made by openssl, signed by one CA
 * the clients trust; the files rotated on disk as a Secret volume rotates them (a new file moved
 * into place), while a keep-alive connection stays open.
 */
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import express from 'express';
import { watchServingCertificate, SERVING_CERTIFICATE_DEFAULTS } from '../../lib/http/serving-certificate';
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
  it('serves the new certificate at the next handshake, keeps open connections, and keeps the old one when the new files are bad', async () => {
    certificates.install(first);
    const state = createIntrospectionState({ waitForConfig: false });
    const app = express();
    app.get('/ping', (_req, res) => void res.send('pong'));
    const server = https.createServer(app);
    const errors: string[] = [];
    const watch = watchServingCertificate(server, {
      certFile: served.cert,
      keyFile: served.key,
      checkIntervalMs: 100,
      state,
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

      certificates.install(second);
      // Put in service by this check, or by the timer's just before it.
      await watch.check();
      expect(watch.current.fingerprint256).toBe(secondPrint);
      expect(await certificates.servedFingerprint(port)).toBe(secondPrint);
      // The keep-alive connection opened before the rotation is still open and still answers.
      expect(await get()).toEqual({ body: 'pong', socketFingerprint: firstPrint });
      const events = state.readEvents({ type: 'tls.' }, 10).events.map((e) => e.type);
      expect(events).toEqual(['tls.reloaded']);

      // A key that does not belong to the certificate: the second certificate stays in service.
      fs.copyFileSync(first.key, served.key);
      expect(await watch.check()).toBe(false);
      expect(watch.lastError).toBe('the private key does not belong to the certificate');
      expect(await certificates.servedFingerprint(port)).toBe(secondPrint);
      // Garbage in the certificate file, and a missing file: the same.
      fs.writeFileSync(served.cert, 'not a certificate');
      expect(await watch.check()).toBe(false);
      expect(watch.lastError).toMatch(/^the certificate file holds no PEM certificate/);
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
      watch.close();
      agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('throws at the call on a bad first pair, a wrong server or a wrong option', () => {
    const server = https.createServer();
    expect(() => watchServingCertificate(server, { certFile: first.cert, keyFile: second.key })).toThrow(
      'the private key does not belong to the certificate',
    );
    expect(() => watchServingCertificate(server, { certFile: path.join(dir, 'none.crt'), keyFile: first.key })).toThrow(/ENOENT/);
    expect(() => watchServingCertificate({} as never, { certFile: first.cert, keyFile: first.key })).toThrow(
      'watchServingCertificate: the first argument must be a node:https or node:tls server (with setSecureContext)',
    );
    expect(() => watchServingCertificate(server, { certFile: first.cert, keyFile: first.key, checkIntervalMS: 5 } as never)).toThrow(
      'did you mean "checkIntervalMs"',
    );
    expect(() => watchServingCertificate(server, { keyFile: first.key } as never)).toThrow('watchServingCertificate: certFile is required');
    expect(SERVING_CERTIFICATE_DEFAULTS).toEqual({ certFile: '', keyFile: '', checkIntervalMs: 10_000 });
  });
});
