/** `node:url`'s `fileURLToPath`, for POSIX `file:` URLs (the page only names files with it). */
export function fileURLToPath(url: string | URL): string {
  const parsed = new URL(String(url));
  if (parsed.protocol !== 'file:') throw new TypeError('The URL must be of scheme file');
  return decodeURIComponent(parsed.pathname);
}
