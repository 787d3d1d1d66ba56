/**
 * A strict line-by-line check of an exposition against the grammar of its format: the OpenMetrics
 * 1.0.0 ABNF, and the Prometheus text format 0.0.4 as its documentation states it. Unlike the
 * test parser (`exposition-parser.ts`), which reads what it can, this one reports every line a
 * scraper would refuse: a raw newline or an unescaped quote inside a label value, a backslash
 * followed by anything but `\`, `"` or `n`, a name outside the legacy character set, an unknown
 * `# TYPE` word, a value that is not a number.
 */

const METRIC_NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL_NAME = '[a-zA-Z_][a-zA-Z0-9_]*';
/** OpenMetrics `escaped-string`: no raw `"`, `\` or newline; a backslash escapes `\`, `"` or `n` only. */
const ESCAPED = '(?:[^"\\\\\\n]|\\\\[\\\\"n])*';
const LABELS = `\\{(?:${LABEL_NAME}="${ESCAPED}"(?:,${LABEL_NAME}="${ESCAPED}")*)?\\}`;
const REAL = '[+-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:[eE][+-]?\\d+)?';
/** Text 0.0.4 values are read by Go's ParseFloat: any case of NaN and Inf (prom-client writes `Nan`). */
const TEXT_NUMBER = `(?:${REAL}|[+-]?[Ii]nf|[Nn]a[Nn])`;
const OM_NUMBER = `(?:${REAL}|[+-]Inf|NaN)`;

const TEXT_TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped'];
const OM_TYPES = ['counter', 'gauge', 'histogram', 'gaugehistogram', 'stateset', 'info', 'summary', 'unknown'];

/** Text HELP: backslash and newline escaped, a backslash followed by `\` or `n` only. */
const TEXT_HELP = '(?:[^\\\\\\n]|\\\\[\\\\n])*';

const text = {
  help: new RegExp(`^# HELP ${METRIC_NAME} ${TEXT_HELP}$`),
  type: new RegExp(`^# TYPE ${METRIC_NAME} (?:${TEXT_TYPES.join('|')})$`),
  sample: new RegExp(`^${METRIC_NAME}(?:${LABELS})? ${TEXT_NUMBER}(?: -?\\d+)?$`),
};

const om = {
  help: new RegExp(`^# HELP ${METRIC_NAME} ${ESCAPED}$`),
  type: new RegExp(`^# TYPE ${METRIC_NAME} (?:${OM_TYPES.join('|')})$`),
  unit: new RegExp(`^# UNIT ${METRIC_NAME} [a-zA-Z0-9_:]*$`),
  sample: new RegExp(`^${METRIC_NAME}(?:${LABELS})? ${OM_NUMBER}(?: ${REAL})?(?: # ${LABELS} ${OM_NUMBER}(?: ${REAL})?)?$`),
};

/** Every line of `body` that its format's grammar refuses, with its number; empty when the body is valid. */
export function grammarProblems(body: string, format: 'text' | 'openmetrics'): string[] {
  const problems: string[] = [];
  if (!body.endsWith('\n')) problems.push('the body does not end with a newline');
  const lines = body.split('\n').slice(0, -1);
  lines.forEach((line, index) => {
    const at = `line ${index + 1}: ${JSON.stringify(line.slice(0, 200))}`;
    if (format === 'text') {
      if (line === '') return;
      const valid = line.startsWith('# HELP ') ? text.help : line.startsWith('# TYPE ') ? text.type : text.sample;
      if (!valid.test(line)) problems.push(at);
      return;
    }
    if (index === lines.length - 1) {
      if (line !== '# EOF') problems.push(`${at} (the last line must be # EOF)`);
      return;
    }
    const valid = line.startsWith('# HELP ')
      ? om.help
      : line.startsWith('# TYPE ')
        ? om.type
        : line.startsWith('# UNIT ')
          ? om.unit
          : om.sample;
    if (!valid.test(line)) problems.push(at);
  });
  return problems;
}
