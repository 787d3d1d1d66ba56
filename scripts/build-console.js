'use strict';
// Bundles the debug console (console-page/) into dist/console-page: the page, one script and
// one style sheet loaded with it, and chunks loaded only by the views that need them (the flame
// graph library and the profile converters load with the profiles view). Everything the page
// runs is in the package: port-forwarded clusters are often offline, and the page's CSP allows
// only its own origin. Third-party licences of what was bundled go to THIRD_PARTY_LICENSES.txt.
//
// The page runs lib/pprof's converters as the server does; they are platform-neutral, so the
// bundle is built for the browser with no stand-ins for Node built-ins: a `node:` import reached
// from the page fails this build. `--outdir DIR` builds elsewhere and `--metafile FILE` writes
// esbuild's account of the inputs (__tests__/console/bundle.test.ts checks both).
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const esbuild = require('esbuild');

const root = path.resolve(__dirname, '..');
const pageDir = path.join(root, 'console-page');
const { values: args } = parseArgs({ options: { outdir: { type: 'string' }, metafile: { type: 'string' } } });
const outDir = path.resolve(args.outdir ?? path.join(root, 'dist', 'console-page'));

function licenseOf(dir) {
  for (const name of ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'license']) {
    const file = path.join(dir, name);
    if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  }
  return undefined;
}

/** The licence text of every npm package whose code ended up in the bundle. */
function thirdPartyLicenses(metafile) {
  const packages = new Map();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /^(.*node_modules\/(@[^/]+\/[^/]+|[^/]+))\//.exec(input);
    if (!match) continue;
    const dir = path.join(root, match[1]);
    if (packages.has(match[2])) continue;
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    packages.set(
      match[2],
      `${manifest.name}@${manifest.version} (${manifest.license})\n\n${licenseOf(dir) ?? `licence: ${manifest.license}`}`,
    );
  }
  return [...packages.keys()]
    .sort()
    .map((name) => packages.get(name))
    .join(`\n\n${'-'.repeat(72)}\n\n`);
}

async function main() {
  fs.rmSync(outDir, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: { console: path.join(pageDir, 'main.ts') },
    outdir: outDir,
    bundle: true,
    format: 'esm',
    splitting: true,
    chunkNames: '[name]-[hash]',
    minify: true,
    platform: 'browser',
    target: ['chrome111', 'firefox115', 'safari16.4'],
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  // A lazily loaded chunk's CSS (the flame graph's, a few hundred bytes) would need its hashed
  // name to be loaded; it joins the page's style sheet instead.
  for (const name of fs.readdirSync(outDir)) {
    if (!name.endsWith('.css') || name === 'console.css') continue;
    fs.appendFileSync(path.join(outDir, 'console.css'), fs.readFileSync(path.join(outDir, name)));
    fs.rmSync(path.join(outDir, name));
  }
  fs.copyFileSync(path.join(pageDir, 'index.html'), path.join(outDir, 'index.html'));
  fs.writeFileSync(path.join(outDir, 'THIRD_PARTY_LICENSES.txt'), `${thirdPartyLicenses(result.metafile)}\n`);
  if (args.metafile) fs.writeFileSync(args.metafile, JSON.stringify(result.metafile));
}

main().catch((err) => {
  console.error(err.message);
  process.exit(1);
});
