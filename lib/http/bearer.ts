/**
 * The one reader of an `Authorization: Bearer` header, for both guards (the access guard's static
 * token and `createKubeAuth`'s reviewed one): bounded before it is matched, and a token of visible
 * ASCII only (RFC 6750's `b64token` and more, never spaces or controls).
 */

/** The longest token accepted: a longer header is refused before it is matched or hashed. */
export const MAX_TOKEN_LENGTH = 4096;

/**
 * The longest `Authorization` header read: `Bearer ` and the longest token. A 16 MB header (a
 * host's raised `maxHeaderSize`) cost 150 ms of matching and 130 ms of hashing in one turn before
 * this bound; it is fixed, not the configured token's length, so a refusal tells nothing about it.
 */
export const MAX_AUTHORIZATION_LENGTH = 'Bearer '.length + MAX_TOKEN_LENGTH;

/** A token: visible ASCII only, no spaces or control characters. */
export const TOKEN_CHARACTERS = /^[\x21-\x7e]+$/;
const BEARER = /^Bearer ([\x21-\x7e]+)$/i;

/** The token of an `Authorization` header, or why there is none (a 401's message). */
export type BearerReading = { readonly token: string } | { readonly refused: 'no bearer token' | 'malformed bearer token' };

/** Reads the bearer token of an `Authorization` header: none, malformed (or too long), or the token. */
export function readBearerToken(header: string | undefined): BearerReading {
  if (header === undefined || header === '' || /^bearer\s*$/i.test(header)) return { refused: 'no bearer token' };
  const match = header.length > MAX_AUTHORIZATION_LENGTH ? null : BEARER.exec(header);
  return match === null ? { refused: 'malformed bearer token' } : { token: match[1]! };
}
