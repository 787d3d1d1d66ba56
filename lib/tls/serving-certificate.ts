import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { SecureContextOptions, Server as TlsServer } from 'node:tls';
import { checkStateInPlace } from '../options';
import * as option from '../options/spec';
import { optionSpec } from '../options/spec';
import { closeOnce } from '../util/close-once';
import { cutText } from '../util/cut-text';
import { errorMessage } from '../util/error-message';
import { fileIdentity, identityOrNone, readBoundedFile, readBoundedFileSync, unfitReason, type FileRead } from '../util/bounded-file';

/** Options of {@link watchServingCertificate}; omitted ones take {@link SERVING_CERTIFICATE_DEFAULTS}. */
export interface ServingCertificateOptions {
  /** The PEM certificate (chain) file, as cert-manager or a Secret volume writes it (`tls.crt`). Required. */
  certFile: string;
  /** The PEM private key file (`tls.key`). Required. */
  keyFile: string;
  /**
   * How often both files are looked at, in milliseconds: their identity (`stat`) is compared with
   * the files last read, and they are read again only when it changed. A Secret volume changes by
   * swapping a symbolic link, which file watchers miss; looking is what always sees it. Default 10 000.
   */
  checkIntervalMs?: number;
  /**
   * The largest certificate or key file read, in bytes. A larger file, or anything that is not a
   * regular file (a named pipe, a device), is refused without being read: the certificate in
   * service stays and the error names the file and its size. A hostPath or emptyDir volume can
   * hold anything (a Secret volume, up to 1 MiB). The TLS server loads a certificate on the event
   * loop at some 30 ms per MiB, so the default keeps that load under 10 ms while a real chain
   * (a few kilobytes) fits many times over. Default 262 144 (256 KiB).
   */
  maxFileBytes?: number;
  /**
   * The most PEM blocks the certificate file may hold: the leaf and its intermediates. The TLS
   * server loads every one on the event loop (about 0.15 ms each), so a file of a thousand is
   * refused rather than loaded. Default 10.
   */
  maxChainCertificates?: number;
  /** Told of every certificate put in service after the first (its subject, expiry and fingerprint). */
  onReload?: (certificate: ServingCertificateInfo) => void;
  /** Told when new files could not be used; the certificate in service stays. */
  onError?: (error: Error) => void;
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

/**
 * Where {@link watchServingCertificate} publishes its events, declared here where they are
 * published: the `IntrospectionState` is one (its `publishEvent`), and a host may write its own.
 */
export interface CertificateEventPublisher {
  /**
   * Publishes the event `type` (`tls.reloaded` or `tls.reload_failed`) with a one-line summary and
   * its details (the certificate's subject, expiry and fingerprint; or the files and the error).
   */
  publishEvent(type: string, summary: string, options: { readonly details: Readonly<Record<string, unknown>> }): void;
}

/** A running certificate watch, from {@link watchServingCertificate}. */
export interface ServingCertificateWatch {
  /** The certificate in service. */
  readonly current: ServingCertificateInfo;
  /** Why the last change of the files could not be used; undefined when the files in service are the newest. */
  readonly lastError: string | undefined;
  /**
   * Looks at the files (as the timer does), reads them when they changed, and puts them in service
   * when they make a new valid pair. The look is taken after the call: while a check runs, the
   * call waits for it and then looks again. Resolves `true` when a new certificate went into
   * service. Never rejects.
   */
  check(): Promise<boolean>;
  /**
   * Stops watching: the timer stops, and a check in flight is abandoned (it puts nothing in service
   * and reports nothing). The certificate in service stays. The promise settles at once (on a
   * later microtask) and never rejects. Idempotent: every call answers the same promise. Fits
   * `drain({ close: [watch] })`.
   */
  close(): Promise<void>;
}

const WHERE = 'watchServingCertificate';

/**
 * The settings of a TLS server that `setSecureContext` resets to their defaults unless given again
 * (Node's `tls.Server#setSecureContext` rebuilds the context from its argument alone): a server
 * made with `ca`, `requestCert` for client certificates, `minVersion` or `ciphers` would lose them at
 * the first reload. Read from the server (never written) and given again with the new pair.
 */
const KEPT_SETTINGS = [
  'passphrase',
  'clientCertEngine',
  'ca',
  'crl',
  'minVersion',
  'maxVersion',
  'secureProtocol',
  'secureOptions',
  'ciphers',
  'sigalgs',
  'ecdhCurve',
  'dhparam',
  'honorCipherOrder',
  'sessionIdContext',
  'sessionTimeout',
  'ticketKeys',
  'privateKeyIdentifier',
  'privateKeyEngine',
] as const;

/** The server's settings as they are, with `cert` and `key` the new pair. */
function withPair(server: TlsServer, cert: Buffer, key: Buffer): SecureContextOptions {
  const settings = server as unknown as Readonly<Record<string, unknown>>;
  const kept: Record<string, unknown> = {};
  for (const name of KEPT_SETTINGS) if (settings[name] !== undefined) kept[name] = settings[name];
  return { ...(kept as SecureContextOptions), cert, key };
}
const MAX_ERROR = 300;

/** The options of {@link watchServingCertificate}, declared once: kinds, ranges and defaults. */
const SERVING_CERTIFICATE_SPEC = optionSpec(WHERE, {
  /** Required. */
  certFile: option.string('', 1),
  /** Required. */
  keyFile: option.string('', 1),
  /** Both files are looked at every 10 s. */
  checkIntervalMs: option.integer(10_000, { min: 100, max: 86_400_000 }),
  /** 256 KiB: a chain's load stays under 10 ms. */
  maxFileBytes: option.integer(262_144, { min: 4096, max: 16_777_216 }),
  /** A leaf and a few intermediates. */
  maxChainCertificates: option.integer(10, { min: 1, max: 1000 }),
  /** Nobody is told. */
  onReload: option.callback<(certificate: ServingCertificateInfo) => void>('a function taking the certificate'),
  /** Nobody is told. */
  onError: option.callback<(error: Error) => void>('a function taking the error'),
});

/** What the options of {@link watchServingCertificate} resolve to when omitted. Frozen. */
export const SERVING_CERTIFICATE_DEFAULTS = SERVING_CERTIFICATE_SPEC.defaults;

/** The options as {@link watchServingCertificate} runs with them, and the state it publishes to. */
type Resolved = ReturnType<typeof SERVING_CERTIFICATE_SPEC.resolve> & { readonly state: CertificateEventPublisher | undefined };

/** What the watch calls on its state: {@link CertificateEventPublisher}'s calls. */
const STATE_METHODS = ['publishEvent'] as const;

/** The pair in service: the digest of its two files, and what its certificate is. */
interface Served {
  readonly digest: string;
  readonly info: ServingCertificateInfo;
}

const CERT_FILE = 'the certificate file';
const KEY_FILE = 'the key file';
/** Where a Kubernetes Secret volume keeps the link to its current files, beside them. */
const VOLUME_DATA = '..data';
const PEM_BEGIN = '-----BEGIN ';

function digestOf(cert: Buffer, key: Buffer): string {
  return createHash('sha256').update(cert).update('\0').update(key).digest('hex');
}

/** How many PEM blocks `pem` holds (every one is parsed by the TLS server, a certificate or not). */
function pemBlocks(pem: Buffer): number {
  let blocks = 0;
  for (let at = pem.indexOf(PEM_BEGIN); at !== -1; at = pem.indexOf(PEM_BEGIN, at + PEM_BEGIN.length)) blocks += 1;
  return blocks;
}

/**
 * Checks a pair: a PEM certificate (chain) of at most `maxChainCertificates` blocks, and the
 * private key that belongs to it. Throws with the reason, which never quotes the files' content.
 * The TLS server's own load of the chain is the caller's `setSecureContext`.
 */
function checkedPair(cert: Buffer, key: Buffer, o: Resolved): Served {
  const blocks = pemBlocks(cert);
  if (blocks > o.maxChainCertificates) {
    throw new Error(`${CERT_FILE} ${o.certFile} holds ${blocks} PEM blocks, over maxChainCertificates (${o.maxChainCertificates})`);
  }
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    throw new Error(`${CERT_FILE} holds no PEM certificate (${errorMessage(err)})`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new Error(`${KEY_FILE} holds no PEM private key (${errorMessage(err)})`);
  }
  if (!leaf.checkPrivateKey(privateKey)) throw new Error('the private key does not belong to the certificate');
  const info = {
    subject: leaf.subject.replace(/\n/g, ', '),
    notAfter: new Date(leaf.validTo).toISOString(),
    fingerprint256: leaf.fingerprint256,
  };
  return { digest: digestOf(cert, key), info };
}

/** Resolves on the event loop's next turn. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * The watch behind {@link watchServingCertificate}: what is served, what was last seen on disk,
 * and the check that compares them.
 *
 * Change detection: a check looks at (`stat`, following links) the certificate file, the key file
 * and the `..data` entry beside each (the link a Secret volume swaps; absent elsewhere), and
 * reads the files only when the identity of any (device, inode, size, modification and change
 * time) differs from the last look that was read or refused. A version read within two seconds
 * of its last change is read again at the next check (`SETTLE_MS`, bounded-file.ts), since a
 * write in the same tick of the file system's clock would not show; the same bytes again cost a
 * digest, not a parse.
 */
class CertificateWatch {
  served: Served;
  lastError: string | undefined;
  /** The look whose files were read (or refused) and are trusted unchanged while it stays. */
  private seen: string | undefined;
  private failedKey = '';
  private closed = false;
  private running: Promise<boolean> | undefined;
  private queued: Promise<boolean> | undefined;
  private readonly dataLinks: readonly string[];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly server: TlsServer,
    private readonly o: Resolved,
  ) {
    const cert = readBoundedFileSync(o.certFile, o.maxFileBytes, CERT_FILE, 'maxFileBytes');
    const key = readBoundedFileSync(o.keyFile, o.maxFileBytes, KEY_FILE, 'maxFileBytes');
    this.served = checkedPair(cert.bytes, key.bytes, o);
    server.setSecureContext(withPair(server, cert.bytes, key.bytes));
    const dirs = new Set([path.dirname(o.certFile), path.dirname(o.keyFile)]);
    this.dataLinks = [...dirs].map((dir) => path.join(dir, VOLUME_DATA));
    this.timer = setInterval(() => this.tick(), o.checkIntervalMs);
    this.timer.unref();
  }

  /**
   * A check that looks at the files after this call. Checks never overlap: a call made while one
   * runs gets the next one, started when it ends (callers meanwhile share that one), so a host that
   * changed the files and then calls check() is never answered by a look taken before its change.
   */
  check(): Promise<boolean> {
    if (this.running === undefined) return this.start();
    return (this.queued ??= this.running.then(() => {
      this.queued = undefined;
      return this.start();
    }));
  }

  /** The timer's check: joins the running one, if any. */
  private tick(): void {
    if (this.running === undefined) void this.start();
  }

  private start(): Promise<boolean> {
    return (this.running = this.checkOnce().finally(() => (this.running = undefined)));
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
  }

  /** Reports a change of the files that could not be used, once per bad version (`key`) and reason. */
  private report(err: unknown, key: string): void {
    if (this.closed) return;
    const message = cutText(errorMessage(err), MAX_ERROR);
    if (key === this.failedKey && this.lastError === message) return;
    this.failedKey = key;
    this.lastError = message;
    try {
      this.o.state?.publishEvent('tls.reload_failed', `new serving certificate not used: ${message}`, {
        details: { certFile: this.o.certFile, keyFile: this.o.keyFile, error: message },
      });
      this.o.onError?.(new Error(message));
    } catch {
      // A host callback that throws changes nothing here.
    }
  }

  /** The identity of everything looked at, and why the files cannot be read as they stand, if so. */
  private async look(): Promise<{ key: string; unfit: string | undefined }> {
    const [cert, key, ...links] = await Promise.all([
      stat(this.o.certFile, { bigint: true }),
      stat(this.o.keyFile, { bigint: true }),
      ...this.dataLinks.map(identityOrNone),
    ]);
    const { certFile, keyFile, maxFileBytes } = this.o;
    return {
      key: [fileIdentity(cert), fileIdentity(key), ...links].join('|'),
      unfit:
        unfitReason(cert, CERT_FILE, certFile, maxFileBytes, 'maxFileBytes') ??
        unfitReason(key, KEY_FILE, keyFile, maxFileBytes, 'maxFileBytes'),
    };
  }

  private async checkOnce(): Promise<boolean> {
    let look: { key: string; unfit: string | undefined };
    let cert: FileRead;
    let key: FileRead;
    try {
      look = await this.look();
      if (look.key === this.seen) return false;
      if (look.unfit !== undefined) {
        this.seen = look.key;
        this.report(new Error(look.unfit), look.key);
        return false;
      }
      [cert, key] = await Promise.all([
        readBoundedFile(this.o.certFile, this.o.maxFileBytes, CERT_FILE, 'maxFileBytes'),
        readBoundedFile(this.o.keyFile, this.o.maxFileBytes, KEY_FILE, 'maxFileBytes'),
      ]);
    } catch (err) {
      this.seen = undefined;
      this.report(err, 'unreadable');
      return false;
    }
    // Trusted unchanged from now on only if what was read is what was looked at, and settled.
    const asLooked = look.key.startsWith(`${cert.identity}|${key.identity}|`);
    this.seen = asLooked && cert.settled && key.settled ? look.key : undefined;
    return this.use(cert.bytes, key.bytes);
  }

  /** Puts a pair read from disk in service, unless it is the one served or is not valid. */
  private async use(cert: Buffer, key: Buffer): Promise<boolean> {
    const digest = digestOf(cert, key);
    if (digest === this.served.digest) {
      this.lastError = undefined;
      return false;
    }
    let pair: Served;
    try {
      pair = checkedPair(cert, key, this.o);
      // The TLS server's load of the chain, the costlier half, in a turn of its own. A failed
      // load leaves the context in service as it was.
      await nextTurn();
      if (this.closed) return false;
      this.server.setSecureContext(withPair(this.server, cert, key));
    } catch (err) {
      this.report(err, digest);
      return false;
    }
    this.served = pair;
    this.lastError = undefined;
    this.failedKey = '';
    try {
      this.o.state?.publishEvent('tls.reloaded', `serving certificate ${pair.info.subject} until ${pair.info.notAfter}`, {
        details: { ...pair.info },
      });
      this.o.onReload?.(pair.info);
    } catch {
      // As above.
    }
    return true;
  }
}

/**
 * Serves the certificate and key of two PEM files on a TLS (HTTPS) server, and puts new ones in
 * service when the files change, without a restart: connections already open keep their session,
 * the next handshake uses the new certificate.
 *
 * Every `checkIntervalMs` the files are looked at, not read: each file's identity (device, inode,
 * size, modification and change times, through `stat`), and that of the `..data` link beside it
 * when there is one (a Secret volume's), is compared with the last files read; only a change has
 * them read, hashed and parsed. A file over `maxFileBytes`, or one that is not a regular file (a
 * named pipe, `/dev/zero`), is refused without being read; every read is bounded and
 * asynchronous. A change that does not make a valid pair (a half-written file, a key of another
 * certificate, no PEM at all, a chain over `maxChainCertificates`) keeps the certificate in
 * service and reports the reason (`lastError`, `onError`, the event `tls.reload_failed`); the
 * files are read again when they change again.
 *
 * The files are read once synchronously here (bounded alike), so a wrong path or a bad pair
 * throws at the call; the server may have been created without a certificate
 * (`https.createServer(app)`).
 *
 * @param server - A `node:https` or `node:tls` server: what `setSecureContext` is called on.
 * @param state - Where to publish the events `tls.reloaded` and `tls.reload_failed`: the
 *   `IntrospectionState`, or any {@link CertificateEventPublisher}; `undefined` for nowhere.
 * @throws TypeError on a wrong server or state, or wrong options (options given second, where the
 *   state goes, are refused with the call's new shape); Error when the files cannot be read or do
 *   not make a pair.
 */
export function watchServingCertificate(
  server: TlsServer,
  state: CertificateEventPublisher | undefined,
  options: ServingCertificateOptions,
): ServingCertificateWatch {
  if (typeof (server as Partial<TlsServer> | null)?.setSecureContext !== 'function') {
    throw new TypeError(`${WHERE}: the first argument must be a node:https or node:tls server (with setSecureContext)`);
  }
  if (state !== undefined) {
    checkStateInPlace(WHERE, state, STATE_METHODS, {
      position: 'second',
      optional: true,
      optionKeys: SERVING_CERTIFICATE_SPEC.keys,
      call: 'watchServingCertificate(server, state, { certFile, keyFile })',
    });
  }
  const o = { ...SERVING_CERTIFICATE_SPEC.resolve(options), state };
  for (const name of ['certFile', 'keyFile'] as const) {
    if (o[name] === '') throw new TypeError(`${WHERE}: ${name} is required (a file path)`);
  }
  const watch = new CertificateWatch(server, o);
  return {
    get current() {
      return watch.served.info;
    },
    get lastError() {
      return watch.lastError;
    },
    check: () => watch.check(),
    close: closeOnce(0, () => watch.close()),
  };
}
