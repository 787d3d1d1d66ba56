import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createSecureContext, type Server as TlsServer } from 'node:tls';
import type { IntrospectionState } from '../state/types';
import * as option from '../options/spec';
import { optionSpec } from '../options/spec';
import { cutText } from '../util/cut-text';
import { errorMessage } from '../util/error-message';

/** Options of {@link watchServingCertificate}; omitted ones take {@link SERVING_CERTIFICATE_DEFAULTS}. */
export interface ServingCertificateOptions {
  /** The PEM certificate (chain) file, as cert-manager or a Secret volume writes it (`tls.crt`). Required. */
  certFile: string;
  /** The PEM private key file (`tls.key`). Required. */
  keyFile: string;
  /**
   * How often both files are read and compared with what is served, in milliseconds. A Secret
   * volume changes by swapping a symbolic link, which file watchers miss; reading is what always
   * sees it. Default 10 000.
   */
  checkIntervalMs?: number;
  /** Told of every certificate put in service after the first (its subject, expiry and fingerprint). */
  onReload?: (certificate: ServingCertificateInfo) => void;
  /** Told when new files could not be used; the certificate in service stays. */
  onError?: (error: Error) => void;
  /** Where to publish the events `tls.reloaded` and `tls.reload_failed`, if anywhere. */
  state?: IntrospectionState;
}

/** What a served certificate is, for logs, events and the watcher's `current`. */
export interface ServingCertificateInfo {
  /** The leaf certificate's subject, as `CN=…` lines joined by commas. */
  readonly subject: string;
  /** When it expires (ISO 8601). */
  readonly notAfter: string;
  /** SHA-256 fingerprint of the leaf certificate, `AB:CD:…`. */
  readonly fingerprint256: string;
}

/** A running certificate watch, from {@link watchServingCertificate}. */
export interface ServingCertificateWatch {
  /** The certificate in service. */
  readonly current: ServingCertificateInfo;
  /** Why the last change of the files could not be used; undefined when the files in service are the newest. */
  readonly lastError: string | undefined;
  /**
   * Reads the files now (as the timer does) and puts them in service when they changed and are
   * valid. Resolves `true` when a new certificate went into service. Never rejects.
   */
  check(): Promise<boolean>;
  /** Stops watching. The certificate in service stays. */
  close(): void;
}

const WHERE = 'watchServingCertificate';
const MAX_ERROR = 300;

/** The options of {@link watchServingCertificate}, declared once: kinds, ranges and defaults. */
const SERVING_CERTIFICATE_SPEC = optionSpec(WHERE, {
  /** Required. */
  certFile: option.string('', 1),
  /** Required. */
  keyFile: option.string('', 1),
  /** Both files are read every 10 s. */
  checkIntervalMs: option.integer(10_000, { min: 100, max: 86_400_000 }),
  /** Nobody is told. */
  onReload: option.callback<(certificate: ServingCertificateInfo) => void>('a function taking the certificate'),
  /** Nobody is told. */
  onError: option.callback<(error: Error) => void>('a function taking the error'),
  /** No events. */
  state: option.custom(undefined, (i) => {
    if (i.value !== undefined && typeof (i.value as Partial<IntrospectionState> | null)?.publishEvent !== 'function') {
      throw new TypeError(`${i.where}: ${i.path} must be the IntrospectionState (from createIntrospectionState())`);
    }
    return i.value as IntrospectionState | undefined;
  }),
});

/** What the options of {@link watchServingCertificate} resolve to when omitted. Frozen. */
export const SERVING_CERTIFICATE_DEFAULTS = SERVING_CERTIFICATE_SPEC.defaults;

/** A key pair read from disk and checked: the certificate parses, and the key is its key. */
interface KeyPair {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly digest: string;
  readonly info: ServingCertificateInfo;
}

function digestOf(cert: Buffer, key: Buffer): string {
  return createHash('sha256').update(cert).update('\0').update(key).digest('hex');
}

/** Checks a pair: a PEM certificate, and the private key that belongs to it. Throws with the reason. */
function checkedPair(cert: Buffer, key: Buffer, digest: string): KeyPair {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    throw new Error(`the certificate file holds no PEM certificate (${errorMessage(err)})`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new Error(`the key file holds no PEM private key (${errorMessage(err)})`);
  }
  if (!leaf.checkPrivateKey(privateKey)) throw new Error('the private key does not belong to the certificate');
  // What the TLS server will be given: it must accept it too (a chain it cannot load, say).
  createSecureContext({ cert, key });
  const info = {
    subject: leaf.subject.replace(/\n/g, ', '),
    notAfter: new Date(leaf.validTo).toISOString(),
    fingerprint256: leaf.fingerprint256,
  };
  return { cert, key, digest, info };
}

/**
 * Serves the certificate and key of two PEM files on a TLS (HTTPS) server, and puts new ones in
 * service when the files change, without a restart: connections already open keep their session,
 * the next handshake uses the new certificate. The files are read every `checkIntervalMs`; a
 * change that does not make a valid pair (a half-written file, a key of another certificate, no
 * PEM at all) keeps the certificate in service, reports the reason (`lastError`, `onError`, the
 * event `tls.reload_failed`) and is tried again at the next check.
 *
 * The files are read once synchronously here, so a wrong path or a bad pair throws at the call;
 * the server may have been created without a certificate (`https.createServer(app)`).
 *
 * @param server - A `node:https` or `node:tls` server: what `setSecureContext` is called on.
 * @throws TypeError on wrong options; Error when the files cannot be read or do not make a pair.
 */
export function watchServingCertificate(server: TlsServer, options: ServingCertificateOptions): ServingCertificateWatch {
  if (typeof (server as Partial<TlsServer> | null)?.setSecureContext !== 'function') {
    throw new TypeError(`${WHERE}: the first argument must be a node:https or node:tls server (with setSecureContext)`);
  }
  const o = SERVING_CERTIFICATE_SPEC.resolve(options);
  for (const name of ['certFile', 'keyFile'] as const) {
    if (o[name] === '') throw new TypeError(`${WHERE}: ${name} is required (a file path)`);
  }
  const first = readFileSync(o.certFile);
  const firstKey = readFileSync(o.keyFile);
  let served = checkedPair(first, firstKey, digestOf(first, firstKey));
  server.setSecureContext({ cert: served.cert, key: served.key });
  let lastError: string | undefined;
  let failedDigest = '';
  let running: Promise<boolean> | undefined;

  const report = (err: unknown, digest: string): void => {
    const message = cutText(errorMessage(err), MAX_ERROR);
    // One report per bad pair, not one per check while it stays on disk.
    if (digest === failedDigest && lastError === message) return;
    failedDigest = digest;
    lastError = message;
    try {
      o.state?.publishEvent('tls.reload_failed', `new serving certificate not used: ${message}`, {
        details: { certFile: o.certFile, keyFile: o.keyFile, error: message },
      });
      o.onError?.(new Error(message));
    } catch {
      // A host callback that throws changes nothing here.
    }
  };

  const checkOnce = async (): Promise<boolean> => {
    let cert: Buffer;
    let key: Buffer;
    try {
      [cert, key] = await Promise.all([readFile(o.certFile), readFile(o.keyFile)]);
    } catch (err) {
      report(err, 'unreadable');
      return false;
    }
    const digest = digestOf(cert, key);
    if (digest === served.digest) {
      lastError = undefined;
      return false;
    }
    let pair: KeyPair;
    try {
      pair = checkedPair(cert, key, digest);
      server.setSecureContext({ cert: pair.cert, key: pair.key });
    } catch (err) {
      report(err, digest);
      return false;
    }
    served = pair;
    lastError = undefined;
    failedDigest = '';
    try {
      o.state?.publishEvent('tls.reloaded', `serving certificate ${pair.info.subject} until ${pair.info.notAfter}`, {
        details: { ...pair.info },
      });
      o.onReload?.(pair.info);
    } catch {
      // As above.
    }
    return true;
  };
  // Checks never overlap: a slow disk makes the next one wait for this one.
  const check = (): Promise<boolean> => (running ??= checkOnce().finally(() => (running = undefined)));
  const timer = setInterval(() => void check(), o.checkIntervalMs);
  timer.unref();
  return {
    get current() {
      return served.info;
    },
    get lastError() {
      return lastError;
    },
    check,
    close: () => clearInterval(timer),
  };
}
