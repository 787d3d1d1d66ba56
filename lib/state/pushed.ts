import { utf8ByteLength } from './byte-length';
import { describeCredentials, type CredentialsVariable } from './credentials';
import { redact, type KeyMatcher } from './redaction';
import { resourceCountEntries, type CountsSource } from './resource-counts';
import type { AuxFile, AuxFilesInput, ControllerConfig, VarReading } from './types';

/** An auxiliary file as served: its content never is, only how large it is. */
interface AuxFileView {
  name: string;
  path: string;
  size: number | null;
}

function describeAuxFiles(files: readonly AuxFile[] | undefined, kind: string): AuxFileView[] {
  if (files === undefined) return [];
  if (!Array.isArray(files)) throw new TypeError(`setAuxFiles: ${kind} must be an array of { name, path }`);
  return files.map((file, i) => {
    if (!file || typeof file.name !== 'string' || typeof file.path !== 'string') {
      throw new TypeError(`setAuxFiles: ${kind}[${i}] needs string "name" and "path"`);
    }
    const content = file.content;
    const size = typeof content === 'string' ? Buffer.byteLength(content) : content instanceof Uint8Array ? content.byteLength : null;
    return { name: file.name, path: file.path, size };
  });
}

/** How `setResourceCounts` names a wrong argument. */
const PUSHED_COUNTS: CountsSource = {
  whole: (got, expected) => `setResourceCounts: counts must be ${expected}, got ${got}`,
  entry: (type, got, expected) => `setResourceCounts: count for ${type} must be ${expected}, got ${got}`,
  unreadable: (message) => `setResourceCounts: reading counts threw: ${message}`,
};

function unavailable(message: string): VarReading {
  return { ok: false, reason: 'unavailable', message };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * What the host pushes with the setters (`config`, `credentials`, `rendered`, `auxfiles`,
 * `resources`). Setters keep references and a timestamp only; the served shape of each (redacted
 * copy, credential metadata, sizes) is built on the first read after a change and reused until
 * the next.
 */
export class PushedValues {
  private config: { config: ControllerConfig; version: string; updated: number } | undefined;
  private configView: unknown;
  private rendered: { text: string; updated: number } | undefined;
  private renderedView: Promise<unknown> | undefined;
  private auxFiles: { input: AuxFilesInput; updated: number } | undefined;
  private auxFilesView: unknown;
  private credentials: { value: Readonly<Record<string, unknown>>; version: string | undefined; updated: number } | undefined;
  private credentialsView: CredentialsVariable | undefined;
  private counts: Readonly<Record<string, number>> | undefined;

  /**
   * @param redactKeys What `config` redacts (the store's `redactKeys`).
   * @param now The wall clock each push is stamped with.
   */
  constructor(
    private readonly redactKeys: KeyMatcher | undefined,
    private readonly now: () => number,
  ) {}

  /** See `IntrospectionState.setConfig`. */
  setConfig(config: ControllerConfig, version: string): void {
    if (config === null || typeof config !== 'object') throw new TypeError('setConfig: config must be an object');
    if (typeof version !== 'string') throw new TypeError('setConfig: version must be a string');
    this.config = { config, version, updated: this.now() };
    this.configView = undefined;
  }

  /** See `IntrospectionState.setRendered`. */
  setRendered(text: string): void {
    if (typeof text !== 'string') throw new TypeError('setRendered: text must be a string');
    this.rendered = { text, updated: this.now() };
    this.renderedView = undefined;
  }

  /** See `IntrospectionState.setAuxFiles`. */
  setAuxFiles(files: AuxFilesInput): void {
    if (files === null || typeof files !== 'object')
      throw new TypeError('setAuxFiles: expected { ssl_certificates, map_files, general_files }');
    this.auxFiles = { input: files, updated: this.now() };
    this.auxFilesView = undefined;
  }

  /** See `IntrospectionState.setResourceCounts`. */
  setResourceCounts(counts: Readonly<Record<string, number>>): void {
    // A copy of own entries: the host may change its object later, and a type named `__proto__`
    // stays a type (Object.fromEntries defines it as an own key).
    this.counts = Object.fromEntries(resourceCountEntries(counts, PUSHED_COUNTS));
  }

  /** See `IntrospectionState.setCredentials`. */
  setCredentials(credentials: Readonly<Record<string, unknown>>, version?: string): void {
    if (credentials === null || typeof credentials !== 'object') throw new TypeError('setCredentials: credentials must be an object');
    this.credentials = { value: credentials, version, updated: this.now() };
    this.credentialsView = undefined;
  }

  /** See `IntrospectionStateReader.resourceCounts`. */
  resourceCounts(): Readonly<Record<string, number>> {
    return this.counts ?? {};
  }

  /** The `config` variable: the configuration (redacted), its version and when it was pushed. */
  readConfig(): VarReading {
    const current = this.config;
    if (current === undefined) return unavailable('config not loaded yet');
    this.configView ??= {
      config: this.redactKeys ? redact(current.config, this.redactKeys) : current.config,
      version: current.version,
      updated: iso(current.updated),
    };
    return { ok: true, value: this.configView };
  }

  /** The `credentials` variable: which credentials and fields hold something, never a value. */
  readCredentials(): VarReading {
    const current = this.credentials;
    if (current === undefined) return unavailable('credentials not loaded yet');
    this.credentialsView ??= describeCredentials(current.value, current.version, iso(current.updated));
    return { ok: true, value: this.credentialsView };
  }

  /** The `rendered` variable: the text, when it was pushed and its size in bytes. */
  async readRendered(): Promise<VarReading> {
    const current = this.rendered;
    if (current === undefined) return unavailable('rendered config not available yet');
    // Cached as a promise: concurrent first reads share one measurement of the text.
    this.renderedView ??= utf8ByteLength(current.text).then((size) => ({ config: current.text, timestamp: iso(current.updated), size }));
    return { ok: true, value: await this.renderedView };
  }

  /** The `auxfiles` variable: names, paths and sizes of the files, never their content. */
  readAuxFiles(): VarReading {
    const current = this.auxFiles;
    if (current === undefined) return unavailable('auxfiles not available yet');
    if (this.auxFilesView === undefined) {
      const { input, updated } = current;
      const ssl = describeAuxFiles(input.ssl_certificates, 'ssl_certificates');
      const maps = describeAuxFiles(input.map_files, 'map_files');
      const general = describeAuxFiles(input.general_files, 'general_files');
      this.auxFilesView = {
        files: { ssl_certificates: ssl, map_files: maps, general_files: general },
        timestamp: iso(updated),
        summary: { ssl_count: ssl.length, map_count: maps.length, general_count: general.length },
      };
    }
    return { ok: true, value: this.auxFilesView };
  }

  /** The `resources` variable: the counts as pushed. */
  readResources(): VarReading {
    return this.counts ? { ok: true, value: this.counts } : unavailable('resources not counted yet');
  }
}
