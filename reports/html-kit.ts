import type Database from 'better-sqlite3';
import escapeHtml from 'escape-html';
import type { Results } from './results.js';

/**
 * What every report section renders from: the ledger (read-only use) and the built results.
 * `memo(key, make)` computes a value once per rendered page and hands it to every section that
 * asks for the same key (e.g. one pass over the samples for both the epoch chart and table).
 */
export interface ReportContext {
  db: Database.Database;
  results: Results;
  memo<T>(key: string, make: () => T): T;
}

/** A fresh {@link ReportContext} for one page (its memo starts empty). */
export function reportContext(db: Database.Database, results: Results): ReportContext {
  const cache = new Map<string, unknown>();
  return {
    db,
    results,
    memo<T>(key: string, make: () => T): T {
      if (!cache.has(key)) cache.set(key, make());
      return cache.get(key) as T;
    },
  };
}

/**
 * One section of report.html (DESIGN.md §6). Sections are rendered in order, each into its own
 * `<section id="…">`. `render` returns HTML in which every string from the store or the ledger
 * is escaped (use {@link esc}); it must be a pure function of the ledger and the results (no
 * clock, no randomness), so that re-analysis reproduces the page byte for byte.
 */
export interface HtmlSection {
  id: string;
  /** The section's heading. */
  title: string;
  /** Its label in the contents bar (a word or two); default: the title up to its first " (". */
  nav?: string;
  render(ctx: ReportContext): string;
}

/** Escapes any value for HTML text or a quoted attribute (escape-html); null/undefined -> ''. */
export function esc(v: unknown): string {
  return v === null || v === undefined ? '' : escapeHtml(String(v));
}

/**
 * A table of escaped cells; no header row when every header is empty. A cell given as
 * `{ html }` is inserted as is (the caller escaped what it holds).
 */
export function htmlTable(headers: readonly string[], rows: readonly (readonly unknown[])[], cls?: string): string {
  const head = headers.every((h) => h === '') ? '' : `<thead><tr>${headers.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>`;
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${isHtml(c) ? c.html : esc(c)}</td>`).join('')}</tr>`).join('\n');
  return `<table${cls === undefined ? '' : ` class="${esc(cls)}"`}>${head}<tbody>\n${body}\n</tbody></table>`;
}

/** Pre-escaped HTML for a {@link htmlTable} cell. */
export interface HtmlCell {
  html: string;
}

function isHtml(c: unknown): c is HtmlCell {
  return typeof c === 'object' && c !== null && typeof (c as HtmlCell).html === 'string';
}

/** A meta value of the ledger (meta table), or null when absent or not text. */
export function metaValue(db: Database.Database, key: string): string | null {
  const v = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key);
  return typeof v === 'string' ? v : null;
}

/**
 * A ledger time (ms since the run started, harness clock) for display: rounded to 0.1 ms,
 * without trailing zeros ("2958", "2957.9"); '' for null/undefined; non-numbers as text.
 */
export function fmtMs(v: unknown): string {
  if (typeof v !== 'number') return v === null || v === undefined ? '' : String(v);
  if (!Number.isFinite(v)) return String(v);
  return String(Math.round(v * 10) / 10);
}

/**
 * A run time in seconds as `h:mm:ss.s` / `m:ss.s` (one decimal), for tables that span hours.
 * Negative values get a leading '-'. Non-numbers -> ''.
 */
export function fmtClock(ms: number | null | undefined): string {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
  const sign = ms < 0 ? '-' : '';
  const tenths = Math.round(Math.abs(ms) / 100);
  const h = Math.floor(tenths / 36_000);
  const m = Math.floor((tenths % 36_000) / 600);
  const s = (tenths % 600) / 10;
  const ss = s.toFixed(1).padStart(4, '0');
  return h > 0 ? `${sign}${h}:${String(m).padStart(2, '0')}:${ss}` : `${sign}${m}:${ss}`;
}

/** Parses JSON text; null when the text is null or not valid JSON. */
export function parseJson(text: string | null | undefined): unknown {
  if (text === null || text === undefined) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** A fault's `nodes` column (JSON array of node ids) as "n1, n2"; the raw text when not an array. */
export function nodeList(text: string | null): string {
  const v = parseJson(text);
  return Array.isArray(v) ? v.map((x) => String(x)).join(', ') : (text ?? '');
}
