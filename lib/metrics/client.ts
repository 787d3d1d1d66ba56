/**
 * The metrics clients this package works with: prom-client 15 and its successor
 * `@prometheus-io/client` 0.16 (published from prometheus/client_js, Node 22+). Each is loaded when
 * the metrics first need it rather than when the package loads: a host that mounts only the
 * introspection router needs neither installed. Every value the metrics take from a client (its
 * metric classes, `collectDefaultMetrics`) comes through here, and always from the client the
 * host's registry belongs to.
 *
 * Two clients in one process (a registry of one and a metric of the other, or a second copy of
 * one that this package does not load) are found when a router or a metric set is created, and
 * named in an error: never a scrape that silently reads half the series.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { MetricsClientModule } from './shapes';

/** A client's module as this package uses it (both clients export the same classes and functions). */
export type ClientModule = MetricsClientModule;

/**
 * How this package reads a client's series without its `get()`, which copies every series in one
 * turn: `hash-map` is prom-client 15's plain object `metric.hashMap` (its keys listed in one step),
 * `label-map` is `@prometheus-io/client` 0.16's `metric.store`, a `LabelMap` whose `values()`
 * iterator is walked one series per step. Both are read only, after checking their shape.
 */
export type SeriesStorage = 'hash-map' | 'label-map';

/** One metrics client as loaded from this package's location. */
export interface MetricsClient {
  /** Its package name, from its own `package.json`: `prom-client` or `@prometheus-io/client`. */
  readonly name: string;
  /** Its version, from its own `package.json`. */
  readonly version: string;
  /** The folder it was loaded from. */
  readonly directory: string;
  /** Its exports. */
  readonly module: ClientModule;
  /** How its series are read, or undefined for a version read only through its public `get()`. */
  readonly storage: SeriesStorage | undefined;
  /** `@prometheus-io/client`'s `LabelMap` class, with which {@link SeriesStorage} `label-map` is checked. */
  readonly labelMap: (abstract new (...args: never[]) => object) | undefined;
  /** The prototype every metric class of the client extends (its `Metric`). */
  readonly metricPrototype: object;
}

/** The package names tried, in order: the first installed one creates metrics for a registry of no client. */
export const METRICS_CLIENT_PACKAGES: readonly string[] = ['prom-client', '@prometheus-io/client'];

/** Versions whose storage is read directly: prom-client 15, `@prometheus-io/client` 0.16. */
function storageOf(name: string, version: string, labelMap: unknown): SeriesStorage | undefined {
  const [major, minor] = version.split('.').map((part) => Number.parseInt(part, 10));
  if (name === 'prom-client' && major === 15) return 'hash-map';
  if (name === '@prometheus-io/client' && major === 0 && minor === 16 && labelMap !== undefined) return 'label-map';
  return undefined;
}

function isObject(value: unknown): value is Record<PropertyKey, unknown> {
  return typeof value === 'object' && value !== null;
}

/** The `package.json` above `file` that names a package: its folder, name and version. */
function packageOf(file: string): { directory: string; name: string; version: string } | undefined {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    try {
      const parsed: unknown = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
      if (isObject(parsed) && typeof parsed.name === 'string') {
        return { directory: dir, name: parsed.name, version: typeof parsed.version === 'string' ? parsed.version : '' };
      }
    } catch {
      // no package.json here, or not ours to read: go up
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** `@prometheus-io/client`'s `LabelMap`, which it exports under a symbol described `util`. */
function labelMapOf(module: object): MetricsClient['labelMap'] {
  const util = Object.getOwnPropertySymbols(module).find((symbol) => symbol.description === 'util');
  const exported: unknown = util === undefined ? undefined : (module as Record<symbol, unknown>)[util];
  const LabelMap = isObject(exported) ? exported.LabelMap : undefined;
  if (typeof LabelMap !== 'function' || typeof (LabelMap.prototype as Record<string, unknown>).values !== 'function') return undefined;
  return LabelMap as MetricsClient['labelMap'];
}

function load(request: string): MetricsClient | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use so that introspection-only hosts need no client
    const module = require(request) as ClientModule;
    const found = packageOf(require.resolve(request));
    const Counter = (module as Partial<ClientModule>).Counter;
    if (found === undefined || typeof Counter !== 'function') return undefined;
    const labelMap = labelMapOf(module);
    return {
      ...found,
      module,
      storage: storageOf(found.name, found.version, labelMap),
      labelMap,
      metricPrototype: Object.getPrototypeOf(Counter.prototype) as object,
    };
  } catch {
    return undefined;
  }
}

let loaded: readonly MetricsClient[] | undefined;

/**
 * The clients installed where this package can load them, each once (two names that resolve to
 * one module count once), in {@link METRICS_CLIENT_PACKAGES} order.
 */
export function installedClients(): readonly MetricsClient[] {
  if (loaded === undefined) {
    const clients: MetricsClient[] = [];
    for (const request of METRICS_CLIENT_PACKAGES) {
      const client = load(request);
      if (client !== undefined && !clients.some((other) => other.module === client.module)) clients.push(client);
    }
    loaded = clients;
  }
  return loaded;
}

/** `name version`, as errors name a client. */
export function clientLabel(client: MetricsClient): string {
  return `${client.name} ${client.version}`;
}

/** The client whose `Registry` `registry` is an instance of (a subclass counts), or undefined. */
export function clientOfRegistry(registry: unknown): MetricsClient | undefined {
  if (!isObject(registry)) return undefined;
  return installedClients().find((client) => registry instanceof client.module.Registry);
}

/** The client whose `Metric` class `metric` extends, or undefined. */
export function clientOfMetric(metric: unknown): MetricsClient | undefined {
  if (!isObject(metric)) return undefined;
  return installedClients().find((client) => client.metricPrototype.isPrototypeOf(metric));
}

/** The classes a copy of a client is recognised by. */
const CLIENT_CLASSES = ['Registry', 'Counter', 'Gauge', 'Histogram', 'Summary'] as const;

/** A prototype's own method names. */
function methodsOf(proto: object): string[] {
  return Object.getOwnPropertyNames(proto).filter((name) => {
    const descriptor = Object.getOwnPropertyDescriptor(proto, name);
    return name !== 'constructor' && descriptor !== undefined && typeof descriptor.value === 'function';
  });
}

/**
 * The name of the client class in `value`'s prototype chain when that class is a metrics client's
 * yet belongs to none of the clients this package loads: a second copy. A class counts as a
 * client's when it has the name of one of the client's classes (`Registry`, `Counter`, `Gauge`,
 * `Histogram`, `Summary`) and every method that class of a loaded client has: a host's own class
 * that only shares a name (a `Registry` of its own with `metrics()`) is not one. Undefined for
 * anything else.
 */
function copiedClientClass(value: object): string | undefined {
  if (clientOfRegistry(value) !== undefined || clientOfMetric(value) !== undefined) return undefined;
  const clients = installedClients();
  for (let proto = Object.getPrototypeOf(value) as object | null; proto !== null; proto = Object.getPrototypeOf(proto) as object | null) {
    const { constructor } = proto as { constructor?: unknown };
    const name = typeof constructor === 'function' ? constructor.name : '';
    if (!(CLIENT_CLASSES as readonly string[]).includes(name)) continue;
    const own = new Set(methodsOf(proto));
    const matches = clients.some((client) => {
      const cls = (client.module as unknown as Record<string, unknown>)[name];
      if (typeof cls !== 'function') return false;
      const expected = methodsOf(cls.prototype as object);
      return expected.length >= 3 && expected.every((method) => own.has(method));
    });
    if (matches) return name;
  }
  return undefined;
}

/** Where the loaded clients are, for an error message. */
function loadedList(): string {
  const clients = installedClients();
  if (clients.length === 0) return 'no metrics client is installed where controller-introspection can load it';
  return `controller-introspection loads ${clients.map((client) => `${clientLabel(client)} from ${client.directory}`).join(' and ')}`;
}

/** Why a second copy is refused, and what to do. */
const COPY_ADVICE =
  'two copies of a metrics client in one process: metrics of one are invisible to the other. Install one copy (npm ls prom-client @prometheus-io/client; npm dedupe), and create the registry and every metric with it';

/**
 * The client of the host's `registry`, after checking that every metric it holds is that client's
 * (or a plain object of the host's that only implements `get()`), for `where` (the function being
 * created). Undefined for a registry of no client (an object of the host's with `metrics()`), which
 * is then rendered by its own `metrics()`.
 *
 * @throws TypeError naming both clients when the registry is of one client and a metric of the
 *   other, or when either comes from a copy of a client this package does not load.
 */
export function checkedClientOf(registry: unknown, where: string): MetricsClient | undefined {
  const client = clientOfRegistry(registry);
  if (client === undefined) {
    if (isObject(registry) && copiedClientClass(registry) !== undefined) {
      throw new TypeError(
        `${where}: the registry is a Registry of a metrics client this package did not load (${loadedList()}); ${COPY_ADVICE}`,
      );
    }
    return undefined;
  }
  const metrics = (registry as { getMetricsAsArray(): unknown }).getMetricsAsArray();
  for (const metric of Array.isArray(metrics) ? (metrics as unknown[]) : []) {
    if (!isObject(metric)) continue;
    const name = typeof metric.name === 'string' ? metric.name : '(unnamed)';
    const other = clientOfMetric(metric);
    if (other !== undefined && other !== client) {
      throw new TypeError(
        `${where}: the registry is ${clientLabel(client)}'s but its metric "${name}" was made with ${clientLabel(other)}: two metrics clients in one process. Create every metric with the registry's client (or pass a registry of ${other.name})`,
      );
    }
    if (other === undefined && copiedClientClass(metric) !== undefined) {
      throw new TypeError(
        `${where}: the registry's metric "${name}" was made with a copy of a metrics client this package did not load (${loadedList()}); ${COPY_ADVICE}`,
      );
    }
  }
  return client;
}

/**
 * The client that creates metrics on `registry` for `where`: the registry's own (checked as
 * {@link checkedClientOf} checks it), else the first installed one.
 *
 * @throws TypeError as {@link checkedClientOf}, or an Error saying what to install when no client can be loaded.
 */
export function clientFor(registry: unknown, where: string): ClientModule {
  const client = checkedClientOf(registry, where) ?? installedClients()[0];
  if (client === undefined) {
    throw new Error(
      `${where} needs a metrics client, a peer dependency of controller-introspection: npm install prom-client (or @prometheus-io/client on Node 22+)`,
    );
  }
  return client.module;
}
