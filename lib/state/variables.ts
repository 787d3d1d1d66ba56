import { compileKeyMatcher, eitherMatcher, redact, type KeyMatcher } from './redaction';
import { UnknownVariableError, type PublishVarOptions, type ReadVarOptions, type VarProvider, type VarReading } from './types';
import { cutText, MAX_ECHOED_MESSAGE } from '../util/cut-text';
import { errorMessage } from '../util/error-message';
import { withTimeout } from '../util/with-timeout';

/**
 * How a built-in variable is read: its reading, given the read's options (`events` looks at
 * them). Throwing fails the read, of this variable and of `state`.
 */
export type BuiltinReader = (options: ReadVarOptions) => VarReading | Promise<VarReading>;

const VAR_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** The variable that gathers all the others: {@link VariableRegistry.snapshot} leaves it out. */
const STATE_VAR = 'state';

interface Entry {
  readonly read: (options: ReadVarOptions) => VarReading | Promise<VarReading>;
  /** A built-in's failure fails `state`; a host provider's only fills its own slot. */
  readonly builtin: boolean;
}

/**
 * The variables, like Go's `expvar`: one map from name to provider, in the order `/debug/vars`
 * lists them. Built-ins are registered first (by the store), the host's own with
 * {@link VariableRegistry.publish}; `state` ({@link VariableRegistry.snapshot}) iterates the map.
 */
export class VariableRegistry {
  private readonly entries = new Map<string, Entry>();

  /**
   * @param redactKeys What every host-published variable redacts (the store's `redactKeys`).
   * @param providerTimeoutMs How long a host provider may take before its read fails.
   * @param now The wall clock of `state`'s `snapshot_time`.
   */
  constructor(
    private readonly redactKeys: KeyMatcher | undefined,
    private readonly providerTimeoutMs: number,
    private readonly now: () => number,
  ) {}

  /** Registers a built-in variable (the store registers them all at construction, in listing order). */
  builtin(name: string, read: BuiltinReader): void {
    this.entries.set(name, { read, builtin: true });
  }

  /** See `IntrospectionState.publishVar`. */
  publish(name: string, provider: VarProvider, options: PublishVarOptions = {}): void {
    if (typeof name !== 'string' || !VAR_NAME.test(name)) {
      throw new TypeError(`publishVar: name must match ${VAR_NAME.source} (letters, digits, "_", ".", "-"), got ${JSON.stringify(name)}`);
    }
    const existing = this.entries.get(name);
    if (existing?.builtin) throw new Error(`publishVar: "${name}" is a built-in variable and cannot be replaced`);
    if (existing) throw new Error(`publishVar: reuse of variable name "${name}" (publish each name once)`);
    if (typeof provider !== 'function') throw new TypeError('publishVar: provider must be a function returning the value');
    const matcher = eitherMatcher(this.redactKeys, compileKeyMatcher(options.redactKeys));
    const timeoutMs = this.providerTimeoutMs;
    this.entries.set(name, {
      builtin: false,
      read: async () => {
        const value = await withTimeout(provider, timeoutMs, () => new Error(`variable "${name}" did not answer within ${timeoutMs} ms`));
        return { ok: true, value: matcher ? redact(value, matcher) : value };
      },
    });
  }

  /** See `IntrospectionStateReader.listVars`. */
  list(): string[] {
    return [...this.entries.keys()];
  }

  /** See `IntrospectionStateReader.readVar`. */
  async read(name: string, options: ReadVarOptions = {}): Promise<VarReading> {
    const entry = this.entries.get(name);
    if (entry === undefined) throw new UnknownVariableError(name, this.list());
    return entry.read(options);
  }

  /**
   * The `state` variable: `snapshot_time`, then every variable by name in listing order (a
   * built-in without a value as `null`). Built-ins are read one after the other, host providers
   * all at once; a failing host provider's slot says why instead of failing the dump.
   */
  async snapshot(options: ReadVarOptions): Promise<Record<string, unknown>> {
    // By name in a Map, made an object by Object.fromEntries: names are the host's, and no name may
    // reach an object's prototype (`constructor`, `toString` are variables like any other).
    const state = new Map<string, unknown>([['snapshot_time', new Date(this.now()).toISOString()]]);
    // Only `limit` applies to the events inside `state`; the event filters are `events`' own.
    const inner: ReadVarOptions = options.limit === undefined ? {} : { limit: options.limit };
    const hosts: [string, Entry][] = [];
    for (const [name, entry] of this.entries) {
      if (name === STATE_VAR) continue;
      if (!entry.builtin) {
        hosts.push([name, entry]);
        continue;
      }
      const reading = await entry.read(inner);
      state.set(name, valueOf(reading));
    }
    const settled = await Promise.allSettled(hosts.map(([, entry]) => entry.read(inner)));
    hosts.forEach(([name], i) => {
      const result = settled[i]!;
      state.set(
        name,
        result.status === 'fulfilled' ? valueOf(result.value) : { error: cutText(errorMessage(result.reason), MAX_ECHOED_MESSAGE) },
      );
    });
    return Object.fromEntries(state);
  }
}

/** A reading as `state` holds it: the value, or `null` for a variable without one yet. */
function valueOf(reading: VarReading): unknown {
  return reading.ok ? reading.value : null;
}
