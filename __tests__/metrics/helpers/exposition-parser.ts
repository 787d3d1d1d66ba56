/**
 * A small parser for the Prometheus text format 0.0.4 and OpenMetrics 1.0.0, written for the
 * tests so they assert on structure (families, types, labels, values) rather than on substrings.
 */

/** An OpenMetrics exemplar after a sample: ` # {labels} value timestamp`. */
export interface ParsedExemplar {
  labels: Record<string, string>;
  value: number;
  timestamp: number | undefined;
}

/** One sample line. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  exemplar?: ParsedExemplar;
}

/** One metric family: its `# HELP`, `# TYPE` and the samples that follow them. */
export interface Family {
  name: string;
  help: string | undefined;
  type: string | undefined;
  samples: Sample[];
}

/** A parsed exposition. */
export interface Exposition {
  families: Map<string, Family>;
  /** Whether the text ended with `# EOF` (OpenMetrics). */
  eof: boolean;
}

/** Parses exposition text; throws on any line it does not understand, so malformed output fails tests. */
export function parseExposition(text: string): Exposition {
  const families = new Map<string, Family>();
  let current: Family | undefined;
  let eof = false;
  const familyNamed = (name: string): Family => {
    let family = families.get(name);
    if (family === undefined) {
      family = { name, help: undefined, type: undefined, samples: [] };
      families.set(name, family);
    }
    current = family;
    return family;
  };
  for (const [index, line] of text.split('\n').entries()) {
    if (line === '') continue;
    if (eof) throw new Error(`line ${index + 1} after # EOF: ${line}`);
    if (line === '# EOF') {
      eof = true;
      continue;
    }
    const meta = /^# (HELP|TYPE|UNIT) (\S+)(?: (.*))?$/s.exec(line);
    if (meta !== null) {
      const family = familyNamed(meta[2]!);
      if (meta[1] === 'HELP') family.help = meta[3] ?? '';
      if (meta[1] === 'TYPE') family.type = meta[3];
      continue;
    }
    const sample = parseSample(line, index + 1);
    if (current === undefined || !sample.name.startsWith(current.name)) {
      throw new Error(`line ${index + 1}: sample ${sample.name} outside its family: ${line}`);
    }
    current.samples.push(sample);
  }
  return { families, eof };
}

/** Reads `{name="value",...}` at the start of `text`; answers the labels and what follows. */
function parseLabels(text: string, line: string, lineNumber: number): { labels: Record<string, string>; rest: string } {
  const labels: Record<string, string> = {};
  if (!text.startsWith('{')) return { labels, rest: text };
  let rest = text.slice(1);
  while (!rest.startsWith('}')) {
    const label = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/.exec(rest);
    if (label === null) throw new Error(`line ${lineNumber}: bad labels: ${line}`);
    labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));
    rest = rest.slice(label[0].length);
  }
  return { labels, rest: rest.slice(1) };
}

function parseSample(line: string, lineNumber: number): Sample {
  const head = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
  if (head === null) throw new Error(`line ${lineNumber}: no metric name: ${line}`);
  const name = head[1]!;
  const { labels, rest } = parseLabels(line.slice(name.length), line, lineNumber);
  const mark = rest.indexOf(' # ');
  const own = mark === -1 ? rest : rest.slice(0, mark);
  const exemplarText = mark === -1 ? undefined : rest.slice(mark + 3);
  const value = /^ (\S+)(?: \S+)?$/.exec(own);
  if (value === null) throw new Error(`line ${lineNumber}: bad value: ${line}`);
  const sample: Sample = { name, labels, value: parseValue(value[1]!, lineNumber) };
  if (exemplarText !== undefined) {
    const exemplar = parseLabels(exemplarText, line, lineNumber);
    const parts = /^ (\S+)(?: (\S+))?$/.exec(exemplar.rest);
    if (parts === null) throw new Error(`line ${lineNumber}: bad exemplar: ${line}`);
    sample.exemplar = {
      labels: exemplar.labels,
      value: parseValue(parts[1]!, lineNumber),
      timestamp: parts[2] === undefined ? undefined : parseValue(parts[2], lineNumber),
    };
  }
  return sample;
}

function parseValue(text: string, lineNumber: number): number {
  // Case-insensitive like Prometheus's own float parsing: prom-client writes NaN as `Nan`.
  if (/^\+?inf$/i.test(text)) return Infinity;
  if (/^-inf$/i.test(text)) return -Infinity;
  if (/^nan$/i.test(text)) return NaN;
  const value = Number(text);
  if (text.trim() === '' || Number.isNaN(value)) throw new Error(`line ${lineNumber}: bad number ${text}`);
  return value;
}

/** The family named `name`, or a test failure listing the families that exist. */
export function family(exposition: Exposition, name: string): Family {
  const found = exposition.families.get(name);
  if (found === undefined) throw new Error(`no family ${name}; families: ${[...exposition.families.keys()].join(', ')}`);
  return found;
}

/**
 * The value of the one sample named `sampleName` whose labels equal `labels` exactly, or
 * `undefined` when there is none.
 */
export function sampleValue(exposition: Exposition, sampleName: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  const matches: Sample[] = [];
  for (const fam of exposition.families.values()) {
    for (const sample of fam.samples) {
      if (sample.name === sampleName && JSON.stringify(Object.entries(sample.labels).sort()) === wanted) matches.push(sample);
    }
  }
  if (matches.length > 1) throw new Error(`${matches.length} samples ${sampleName}${wanted}`);
  return matches[0]?.value;
}
