'use strict';
// The source-map worker: reads scripts' source maps and maps positions through them, on its own
// thread. A bundled application's map can be 5 MB of JSON and VLQ, whose parsing and decoding take
// tens of milliseconds that must never be spent on the host's event loop. Plain JavaScript (not
// compiled) so that the same file runs from lib/ under the tests and from dist/ when installed.
const fs = require('node:fs');
const path = require('node:path');
const { fileURLToPath, pathToFileURL } = require('node:url');
const { parentPort, workerData } = require('node:worker_threads');
const { TraceMap, originalPositionFor, LEAST_UPPER_BOUND } = require('@jridgewell/trace-mapping');

const maxScripts = workerData.maxScripts;
// Script URL → { map } | { none: true } | { error }; oldest first, for a bounded cache.
const cache = new Map();

function scriptPath(url) {
  if (url.startsWith('file:')) return fileURLToPath(url);
  return path.isAbsolute(url) ? url : undefined;
}

/** The last `sourceMappingURL` comment of the script wins, as in Node and browsers. */
function mappingUrl(source) {
  const pattern = /\/[/*][#@][ \t]*sourceMappingURL=([^\s'"]+?)[ \t]*(?:\*\/)?[ \t]*$/gm;
  let found;
  for (let match; (match = pattern.exec(source)) !== null;) found = match[1];
  return found;
}

function load(url) {
  const file = scriptPath(url);
  if (file === undefined) return { none: true };
  const reference = mappingUrl(fs.readFileSync(file, 'utf8'));
  if (reference === undefined) return { none: true };
  if (reference.startsWith('data:')) {
    const comma = reference.indexOf(',');
    if (comma < 0) throw new Error('malformed data: URL in sourceMappingURL');
    const data = reference.slice(comma + 1);
    const text = /;base64$/i.test(reference.slice(0, comma)) ? Buffer.from(data, 'base64').toString('utf8') : decodeURIComponent(data);
    return { map: new TraceMap(text, pathToFileURL(file).href) };
  }
  const mapFile = path.resolve(path.dirname(file), decodeURIComponent(reference));
  return { map: new TraceMap(fs.readFileSync(mapFile, 'utf8'), pathToFileURL(mapFile).href) };
}

function entryFor(url) {
  let entry = cache.get(url);
  if (entry !== undefined) {
    cache.delete(url);
    cache.set(url, entry);
    return entry;
  }
  try {
    entry = load(url);
  } catch (err) {
    entry = { error: String((err && err.message) || err).slice(0, 300) };
  }
  cache.set(url, entry);
  while (cache.size > maxScripts) cache.delete(cache.keys().next().value);
  return entry;
}

function sourcePath(source) {
  if (source.startsWith('file:')) {
    try {
      return fileURLToPath(source);
    } catch {
      return source;
    }
  }
  return source;
}

function mapPosition(map, line, column) {
  // V8's positions are 0-based lines and columns; source maps use 1-based lines.
  let position = originalPositionFor(map, { line: line + 1, column });
  if (position.source === null) position = originalPositionFor(map, { line: line + 1, column, bias: LEAST_UPPER_BOUND });
  if (position.source === null) return null;
  return { source: sourcePath(position.source), line: position.line, column: position.column, name: position.name };
}

parentPort.on('message', ({ id, scripts }) => {
  const results = scripts.map(({ url, positions }) => {
    const entry = entryFor(url);
    if (entry.error !== undefined) return { url, error: entry.error };
    if (entry.none) return { url, none: true };
    return { url, mapped: positions.map(([line, column]) => mapPosition(entry.map, line, column)) };
  });
  parentPort.postMessage({ id, results });
});
