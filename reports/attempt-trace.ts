import { esc, fmtMs } from './html-kit.js';

/**
 * One client attempt as the ledger's `writes.trace` JSON holds it (DESIGN.md §2: the client's
 * per-operation attempt trace): `{n, s, node?, e?, t0, t1}` — attempt number, final status of
 * the attempt (a KvStatus name or a transport failure kind), the node answering, the epoch it
 * answered with, and the harness-clock times (ms since the run started) the attempt was sent
 * and ended.
 */
export interface TraceAttempt {
  n: number | null;
  s: string;
  node: string | null;
  e: number | null;
  t0: number | null;
  t1: number | null;
}

/** Attempts shown per write (the client bounds attempts; a longer trace is cut with a note). */
export const TRACE_ATTEMPTS_SHOWN = 20;

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/**
 * Parses a trace: a JSON array of attempt objects. Missing or mistyped fields become null
 * (status: '?'); numbers are kept as numbers, node ids as strings.
 * @returns the attempts, or null when the text is null, not JSON, or not an array of objects.
 */
export function parseTrace(text: string | null): TraceAttempt[] | null {
  if (text === null) return null;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(v) || !v.every((a) => typeof a === 'object' && a !== null && !Array.isArray(a))) return null;
  return (v as Record<string, unknown>[]).map((a) => ({
    n: num(a.n),
    s: typeof a.s === 'string' ? a.s : a.s === undefined || a.s === null ? '?' : String(a.s),
    node: typeof a.node === 'string' ? a.node : a.node === undefined || a.node === null ? null : String(a.node),
    e: num(a.e),
    t0: num(a.t0),
    t1: num(a.t1),
  }));
}

/**
 * The trace column of a drill-down, readable: an ordered list, one line per attempt,
 * "#n Status · node · e<epoch> · t0 → t1 ms (duration)". A trace that is not a JSON array of
 * attempts is shown as escaped code, cut to 300 characters. Every string is escaped.
 */
export function traceHtml(text: string | null): string {
  if (text === null || text === '') return '';
  const attempts = parseTrace(text);
  if (attempts === null) return `<code>${esc(text.length > 300 ? `${text.slice(0, 300)}…` : text)}</code>`;
  const items = attempts.slice(0, TRACE_ATTEMPTS_SHOWN).map((a) => {
    const parts = [`<b class="st">${esc(a.s)}</b>`];
    if (a.node !== null) parts.push(esc(a.node));
    if (a.e !== null) parts.push(`e${esc(a.e)}`);
    if (a.t0 !== null || a.t1 !== null) {
      const dur = a.t0 !== null && a.t1 !== null ? ` (${esc(fmtMs(a.t1 - a.t0))} ms)` : '';
      parts.push(`${esc(fmtMs(a.t0))} → ${esc(fmtMs(a.t1))}${dur}`);
    }
    return `<li>${a.n === null ? '' : `#${esc(a.n)} `}${parts.join(' · ')}</li>`;
  });
  const more = attempts.length > TRACE_ATTEMPTS_SHOWN ? `<li>… ${esc(attempts.length - TRACE_ATTEMPTS_SHOWN)} more attempts</li>` : '';
  return `<ol class="trace">${items.join('')}${more}</ol>`;
}
