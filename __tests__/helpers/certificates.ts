/**
 * Test certificates made by openssl in a folder of their own: a CA, leaf pairs for IP 127.0.0.1
 * signed by it, and a served pair rotated the way a Secret volume rotates it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

/** A certificate file and its key file. */
export interface CertificatePair {
  readonly cert: string;
  readonly key: string;
}

/** A test CA and what it signs. */
export interface TestCertificates {
  /** The folder holding every file. */
  readonly dir: string;
  /** The CA's certificate: what clients trust. */
  readonly caFile: string;
  /** The pair a server serves (`tls.crt`, `tls.key`), as {@link TestCertificates.install} puts it in place. */
  readonly served: CertificatePair;
  /**
   * A new EC key and certificate for IP 127.0.0.1 (or the subjectAltName `altNames`, such as
   * `IP:127.0.0.1,DNS:x.example`) with subject `CN=<name>`, signed by the CA.
   */
  leaf(name: string, altNames?: string): CertificatePair;
  /** Puts `pair` in service as a Secret volume does: each file copied aside, then renamed into place. */
  install(pair: CertificatePair): void;
  /** The fingerprint of the certificate a new TLS connection to `port` (trusting only the CA) is shown. */
  servedFingerprint(port: number): Promise<string>;
  /** Removes the folder. */
  remove(): void;
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Makes a CA (valid 2 days) in a new temporary folder named after `prefix`. */
export function testCertificates(prefix: string): TestCertificates {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const openssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl('req', '-x509', ...EC, '-keyout', 'ca.key', '-subj', '/CN=test-ca', '-days', '2', '-out', 'ca.crt');
  const served = { cert: path.join(dir, 'tls.crt'), key: path.join(dir, 'tls.key') };
  return {
    dir,
    caFile: path.join(dir, 'ca.crt'),
    served,
    leaf(name, altNames = 'IP:127.0.0.1') {
      openssl('req', ...EC, '-keyout', `${name}.key`, '-subj', `/CN=${name}`, '-out', `${name}.csr`);
      fs.writeFileSync(path.join(dir, `${name}.ext`), `subjectAltName=${altNames}\n`);
      const sign = ['-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2'];
      openssl('x509', '-req', '-in', `${name}.csr`, ...sign, '-extfile', `${name}.ext`, '-out', `${name}.crt`);
      return { cert: path.join(dir, `${name}.crt`), key: path.join(dir, `${name}.key`) };
    },
    install(pair) {
      for (const part of ['cert', 'key'] as const) {
        fs.copyFileSync(pair[part], `${served[part]}.tmp`);
        fs.renameSync(`${served[part]}.tmp`, served[part]);
      }
    },
    servedFingerprint: (port) =>
      new Promise((resolve, reject) => {
        const socket = tls.connect({ host: '127.0.0.1', port, ca: fs.readFileSync(path.join(dir, 'ca.crt')) }, () => {
          const fingerprint = socket.getPeerCertificate().fingerprint256;
          socket.end();
          resolve(fingerprint);
        });
        socket.on('error', reject);
      }),
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
