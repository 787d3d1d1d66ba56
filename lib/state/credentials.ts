import type { Timestamp } from './types';

/** What is served about one credential: never a value, only whether its fields hold something. */
export interface CredentialMetadata {
  /** `true` when the credential (or, for an object, any field of it) holds a non-empty value. */
  set: boolean;
  /** For a credential object: the names of fields holding a non-empty value, sorted. */
  fields_set?: string[];
  /** For a credential object: the names of fields that are present but empty, sorted. */
  fields_empty?: string[];
}

/** The body of the `credentials` variable. */
export interface CredentialsVariable {
  /** Each credential by name, described by shape only. */
  credentials: Record<string, CredentialMetadata>;
  /** The version passed to `setCredentials`, or `null` when none was: tells which Secret revision is loaded. */
  version: string | null;
  /** When `setCredentials` was last called. */
  updated: Timestamp;
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (value instanceof Uint8Array) return value.byteLength === 0;
  if (Array.isArray(value)) return value.length === 0;
  return false;
}

/** Entries in the order of their names, as `Object.keys(...).sort()` orders them. */
function byName([a]: [string, unknown], [b]: [string, unknown]): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Describes credentials by shape only. Values are read solely to decide "empty or not"; nothing
 * derived from a value (length, prefix, hash) is kept, so the result is safe to serve.
 */
export function describeCredentials(
  credentials: Readonly<Record<string, unknown>>,
  version: string | undefined,
  updated: Timestamp,
): CredentialsVariable {
  // Entries, made an object by Object.fromEntries: a credential named `__proto__` is an own key
  // like any other (an assignment would set the object's prototype and lose it).
  const described = Object.entries(credentials)
    .sort(byName)
    .map(([name, value]): [string, CredentialMetadata] => {
      if (value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Uint8Array)) {
        const fields = Object.entries(value as Record<string, unknown>).sort(byName);
        const fieldsSet = fields.filter(([, field]) => !isEmpty(field)).map(([key]) => key);
        const fieldsEmpty = fields.filter(([, field]) => isEmpty(field)).map(([key]) => key);
        return [name, { set: fieldsSet.length > 0, fields_set: fieldsSet, fields_empty: fieldsEmpty }];
      }
      return [name, { set: !isEmpty(value) }];
    });
  return { credentials: Object.fromEntries(described), version: version ?? null, updated };
}
