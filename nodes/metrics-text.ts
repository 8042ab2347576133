/**
 * The Prometheus text exposition format, version 0.0.4 (prometheus.io "Exposition formats"):
 * writing (a store node's metrics endpoint) and a strict reading (the harness's sampler, tests).
 *
 * Written by hand, not with prom-client: the node image carries dist/ only and a node needs
 * nothing but Node built-ins (nodes/Dockerfile). The subset used: counters and gauges, one
 * `# HELP` and one `# TYPE` line per family before its samples, label values escaped (`\\`, `\"`,
 * `\n`), HELP text escaped (`\\`, `\n`), no timestamps, every line ending in `\n`.
 */

/** Content-Type of the format. */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** One sample: its labels (name -> value) and value. */
export interface MetricSample {
  labels: Record<string, string>;
  value: number;
}

/** One metric family. Counter names end in `_total` (the format's convention). */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: MetricSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/**
 * Renders metric families as exposition text.
 * @throws Error when a metric or label name is not valid in the format, or a family has two
 *   samples with the same labels.
 */
export function renderExposition(families: readonly MetricFamily[]): string {
  let out = '';
  for (const f of families) {
    if (!NAME.test(f.name)) throw new Error(`invalid metric name "${f.name}"`);
    out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
    const seen = new Set<string>();
    for (const s of f.samples) {
      const names = Object.keys(s.labels);
      for (const l of names) if (!LABEL.test(l) || l.startsWith('__')) throw new Error(`invalid label name "${l}" in ${f.name}`);
      const labels = names.length === 0 ? '' : `{${names.map((l) => `${l}="${escapeLabel(s.labels[l])}"`).join(',')}}`;
      if (seen.has(labels)) throw new Error(`duplicate sample ${f.name}${labels}`);
      seen.add(labels);
      out += `${f.name}${labels} ${formatValue(s.value)}\n`;
    }
  }
  return out;
}

/** A line the strict reader refused: its 1-based number and why. */
export class ExpositionParseError extends Error {
  override readonly name = 'ExpositionParseError';
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(`exposition line ${line}: ${reason}`);
  }
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)(?:[ \t]+(-?\d+))?$/;
const VALUE = /^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|NaN|[+-]Inf)$/;

/** Parses a label set `a="x",b="y"` (a trailing comma allowed). @throws Error with a reason. */
function parseLabels(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const m = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(text.slice(i));
    if (!m) throw new Error(`bad label at "${text.slice(i, i + 20)}"`);
    const name = m[1];
    i += m[0].length;
    let v = '';
    for (;;) {
      if (i >= text.length) throw new Error(`unterminated value of label ${name}`);
      const c = text[i];
      if (c === '"') break;
      if (c === '\\') {
        const n = text[i + 1];
        if (n === 'n') v += '\n';
        else if (n === '\\' || n === '"') v += n;
        else throw new Error(`bad escape \\${n ?? ''} in label ${name}`);
        i += 2;
      } else {
        v += c;
        i++;
      }
    }
    i++;
    if (name in out) throw new Error(`label ${name} twice`);
    out[name] = v;
    if (i < text.length) {
      if (text[i] !== ',') throw new Error(`expected "," after label ${name}`);
      i++;
    }
  }
  return out;
}

function parseValue(t: string): number {
  if (t === 'NaN') return NaN;
  if (t === '+Inf') return Infinity;
  if (t === '-Inf') return -Infinity;
  return Number(t);
}

/**
 * Reads exposition text strictly: every line is empty, a comment, `# HELP name text`,
 * `# TYPE name counter|gauge|histogram|summary|untyped` (at most once per name, before its
 * samples), or a sample `name{labels} value [timestamp]`; a sample's family is its name, or for
 * histogram/summary the name less `_bucket`/`_sum`/`_count`. Samples with no TYPE are `untyped`.
 * @returns families by name, in order of appearance.
 * @throws ExpositionParseError naming the first bad line.
 */
export function parseExposition(text: string): Map<string, { name: string; help: string; type: string; samples: MetricSample[] }> {
  const fams = new Map<string, { name: string; help: string; type: string; samples: MetricSample[] }>();
  const fam = (name: string): { name: string; help: string; type: string; samples: MetricSample[] } => {
    let f = fams.get(name);
    if (!f) {
      f = { name, help: '', type: 'untyped', samples: [] };
      fams.set(name, f);
    }
    return f;
  };
  const typed = new Set<string>();
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else if (text.length > 0) throw new ExpositionParseError(lines.length, 'the text does not end in a line feed');
  lines.forEach((line, i) => {
    const n = i + 1;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^#[ \t]+(HELP|TYPE)[ \t]+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:[ \t](.*))?$/.exec(line);
      if (!m) return; // an ordinary comment
      const f = fam(m[2]);
      if (m[1] === 'HELP') {
        f.help = (m[3] ?? '').replace(/\\(n|\\)/g, (_, c: string) => (c === 'n' ? '\n' : '\\'));
        return;
      }
      if (typed.has(m[2])) throw new ExpositionParseError(n, `second TYPE line for ${m[2]}`);
      if (f.samples.length > 0) throw new ExpositionParseError(n, `TYPE line for ${m[2]} after its samples`);
      if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(m[3] ?? '')) throw new ExpositionParseError(n, `unknown type "${m[3] ?? ''}" for ${m[2]}`);
      typed.add(m[2]);
      f.type = m[3]!;
      return;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new ExpositionParseError(n, `not a sample line: "${line.slice(0, 80)}"`);
    if (!VALUE.test(m[3])) throw new ExpositionParseError(n, `bad value "${m[3]}"`);
    let labels: Record<string, string>;
    try {
      labels = parseLabels(m[2] ?? '');
    } catch (e) {
      throw new ExpositionParseError(n, (e as Error).message);
    }
    const base = m[1].replace(/_(bucket|sum|count)$/, '');
    const owner = base !== m[1] && ['histogram', 'summary'].includes(fams.get(base)?.type ?? '') ? base : m[1];
    fam(owner).samples.push({ labels, value: parseValue(m[3]) });
  });
  return fams;
}

/**
 * The value of one sample of a parsed exposition: family `name`, labels equal to `labels` (all of
 * them, no others). Undefined when absent.
 */
export function sampleValue(fams: ReturnType<typeof parseExposition>, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels).sort();
  const f = fams.get(name);
  const s = f?.samples.find((x) => {
    const got = Object.entries(x.labels).sort();
    return got.length === want.length && got.every(([k, v], i) => want[i][0] === k && want[i][1] === v);
  });
  return s?.value;
}
