import fs from 'node:fs';
import path from 'node:path';

const REPO = path.resolve(__dirname, '..', '..');
/** The built package entry that `require('controller-introspection')` loads. */
export const DIST_ENTRY = path.join(REPO, 'dist', 'index.js');

/** The most recently modified file under `dir`, with its modification time. */
function newestFile(dir: string): { file: string; mtimeMs: number } | undefined {
  let newest: { file: string; mtimeMs: number } | undefined;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const candidate = entry.isDirectory() ? newestFile(full) : { file: full, mtimeMs: fs.statSync(full).mtimeMs };
    if (candidate && (!newest || candidate.mtimeMs > newest.mtimeMs)) newest = candidate;
  }
  return newest;
}

/**
 * For tests that run the built package (dist/, loaded by child processes or by name): fails with
 * what to do when dist/ is missing or older than a file under lib/ (the console page included, as
 * its bundle is built from there), instead of letting them test stale code. Call it in beforeAll.
 */
export function requireFreshDist(): void {
  if (!fs.existsSync(DIST_ENTRY)) throw new Error('dist/ is missing; run npm run build');
  const built = fs.statSync(DIST_ENTRY).mtimeMs;
  const newest = newestFile(path.join(REPO, 'lib'));
  if (newest && newest.mtimeMs > built) {
    throw new Error(`dist/ is older than ${path.relative(REPO, newest.file)}; run npm run build`);
  }
}
