/**
 * `node:zlib`'s `gzip` is not used by the page (it compresses with the platform's
 * CompressionStream); the server's encoder imports it, so it must exist, and says so if called.
 */
export function gzip(_data: unknown, callback: (err: Error | null) => void): void {
  callback(new Error('zlib.gzip is not available in the browser; use CompressionStream'));
}
