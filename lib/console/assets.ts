import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/** One file of the built page, ready to send. */
export interface ConsoleAsset {
  /** `Content-Type` header value. */
  readonly type: string;
  readonly body: Buffer;
  /** The same bytes gzipped, or `undefined` when gzip does not make them smaller. */
  readonly gzipped: Buffer | undefined;
  /** Strong validator: the page changes only with the package. */
  readonly etag: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/**
 * Where `scripts/build-console.js` writes the page: `dist/console-page/` of the package. The same
 * relative path works from `dist/console/` (the installed package) and from `lib/console/` (the
 * sources run by ts-jest), because both sit two levels below the package root.
 */
export const CONSOLE_ASSET_DIR = path.resolve(__dirname, '..', '..', 'dist', 'console-page');

/**
 * Reads every file of the built page into memory, once: a few hundred kilobytes, and no file
 * system access per request. Throws when the page was not built, so a broken package fails when
 * the router is created rather than on the first visit.
 */
export function loadConsoleAssets(dir: string = CONSOLE_ASSET_DIR): ReadonlyMap<string, ConsoleAsset> {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    throw new Error(
      `the debug console's files are missing from ${dir} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}); build the package with \`npm run build\`, or pass console: false`,
    );
  }
  const assets = new Map<string, ConsoleAsset>();
  for (const name of names) {
    const type = TYPES[path.extname(name)];
    if (type === undefined) continue;
    const body = fs.readFileSync(path.join(dir, name));
    const gzipped = gzipSync(body, { level: 9 });
    assets.set(name, {
      type,
      body,
      gzipped: gzipped.length < body.length ? gzipped : undefined,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    });
  }
  if (!assets.has('index.html'))
    throw new Error(
      `the debug console's index.html is missing from ${dir}; build the package with \`npm run build\`, or pass console: false`,
    );
  return assets;
}
