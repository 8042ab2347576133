import type Database from 'better-sqlite3';
import type { FindingClass, FindingKind } from '../harness/verifier/verifier.js';
import { KeyLogReader } from '../ledger/key-log.js';
import { DrillDetails, drillDown } from './drill-down.js';
import { CLASS_HELP, CLASS_TITLES, classGroups, DRILL_DOWN_PER_CLASS, KEYS_LISTED_PER_INCIDENT, kindTotal, PARTITION_KINDS, READ_KINDS } from './finding-groups.js';
import type { HtmlSection } from './html-kit.js';
import { esc, fmtMs, htmlTable, parseJson } from './html-kit.js';
import { causeText } from './incident-text.js';
import type { ResultFinding } from './results.js';

/**
 * The report's finding sections (DESIGN.md §6): one per class, each listing its keys grouped by
 * incident (collapsed, capped per incident, each key opening into its drill-down), then the read
 * findings and the runtime-map findings as tables.
 */

const table = htmlTable;

/** Rows of the findings table of some kinds, with their evidence (at most `limit`). */
function findingRows(db: Database.Database, kinds: ReadonlySet<string>, limit: number): Array<{ kind: FindingKind; store: string; key: string | null; write: string | null; partition: number | null; read: string | null; detail: string | null }> {
  const list = [...kinds];
  return db
    .prepare(`SELECT kind, store, key, write, partition, read, detail FROM findings WHERE kind IN (${list.map(() => '?').join(', ')}) ORDER BY store, partition, length(key), key, kind LIMIT ?`)
    .all(...list, limit) as Array<{ kind: FindingKind; store: string; key: string | null; write: string | null; partition: number | null; read: string | null; detail: string | null }>;
}

const READ_HELP =
  'Reads the workload made during the run, checked against the writes (history-format.md v2): a read that returned a value older than a write acknowledged before the read began while that write survived (stale-read), a value of a write that definitely failed (phantom-read), or a value never written (unexpected-read). At most one per key, the earliest.';

/** Read findings as a table, with the read, its times, node, the value read, W and the final read. */
export const readFindingsSection: HtmlSection = {
  id: 'reads',
  nav: 'Reads',
  title: 'Read findings (violations: stale, phantom and unexpected reads)',
  render: ({ db, results: r }) => {
    const total = kindTotal(r, READ_KINDS);
    const help = `<p class="howto">${esc(READ_HELP)} ${esc(r.readsChecked)} reads checked.</p>`;
    if (total === 0) return `${help}\n<p>None.</p>`;
    const rows = findingRows(db, READ_KINDS, DRILL_DOWN_PER_CLASS).map((f) => {
      const d = (parseJson(f.detail) ?? {}) as Record<string, unknown>;
      const final = db.prepare('SELECT fr.value, fr.unreadable FROM final_reads fr JOIN keys k ON k.key_id = fr.key_id WHERE k.store = ? AND k.key = ?').get(f.store, f.key) as
        | { value: string | null; unreadable: number }
        | undefined;
      const finalText = final === undefined ? '(none)' : final.unreadable ? 'unreadable' : (final.value ?? 'absent');
      return [f.kind, `${f.store}/${f.key ?? ''}`, f.read ?? '', fmtMs(d.invokeMs), fmtMs(d.completeMs), d.node ?? '', f.write ?? 'absent', d.w ?? '', finalText];
    });
    const more = total > rows.length ? `<p>${esc(total - rows.length)} more in the ledger's findings table.</p>` : '';
    return `${help}
<p>${esc(total)} read finding${total === 1 ? '' : 's'}.</p>
${table(['kind', 'key', 'read', 'invoke ms', 'complete ms', 'node', 'value read', 'acknowledged before the read (W)', 'final read'], rows)}
${more}`;
  },
};

const PARTITION_HELP =
  'The runtime map judged (history-format.md v2): two actives at one epoch (epoch-conflict), an epoch going back in one node\'s own entry (epoch-regression), Healthy while a replica is out of the in-sync set (false-healthy), an async replica left behind longer than the lag bound with nothing in the way (replication-lag). At most one per partition and kind.';

/** A partition finding's evidence in one sentence. */
export function partitionEvidenceText(kind: string, d: Record<string, unknown>): string {
  const ms = (v: unknown): string => (typeof v === 'number' ? `${fmtMs(v)} ms` : '?');
  const list = (v: unknown): string => (Array.isArray(v) ? v.join(', ') : '?');
  switch (kind) {
    case 'epoch-conflict':
      return `epoch ${String(d.epoch)} had the actives ${list(d.actives)} (seen at ${ms(d.tMs)})`;
    case 'epoch-regression':
      return `node ${String(d.node)}'s own entry went from epoch ${String(d.fromEpoch)} back to ${String(d.toEpoch)} at ${ms(d.tMs)}`;
    case 'false-healthy':
      return `Healthy at ${ms(d.tMs)}${d.node ? ` (in ${String(d.node)}'s entry)` : ''} with in-sync set [${list(d.inSync)}], missing ${list(d.missing)}`;
    case 'replication-lag':
      return `at ${ms(d.tMs)} the in-sync member ${String(d.member)} held revision ${String(d.revision)} while the active ${String(d.active)} (epoch ${String(d.epoch)}) had held ${String(d.activeRevision)} since ${ms(d.referenceMs)}, with no fault in the ${String(d.lagMs)} ms before`;
    default:
      return '';
  }
}

/** Runtime-map findings as a table, each with its evidence in a sentence. */
export const runtimeMapSection: HtmlSection = {
  id: 'runtime-map',
  nav: 'Runtime map',
  title: 'Runtime-map findings (violations: epoch conflicts and regressions, false Healthy, replication lag)',
  render: ({ db, results: r }) => {
    const total = kindTotal(r, PARTITION_KINDS);
    const help = `<p class="howto">${esc(PARTITION_HELP)}${r.asyncLagMaxMs === null ? '' : ` Lag bound: ${esc(r.asyncLagMaxMs)} ms.`}</p>`;
    if (total === 0) return `${help}\n<p>None.</p>`;
    const rows = findingRows(db, PARTITION_KINDS, 1_000).map((f) => [f.kind, `${f.store}/${f.partition ?? '?'}`, partitionEvidenceText(f.kind, (parseJson(f.detail) ?? {}) as Record<string, unknown>)]);
    return `${help}
<p>${esc(total)} runtime-map finding${total === 1 ? '' : 's'}.</p>
${table(['kind', 'partition', 'evidence'], rows)}`;
  },
};

/** A finding as one line: "lost — async3/k940 — w940.63" (the read too, for a read finding). */
export function findingLabel(store: string, f: Pick<ResultFinding, 'kind' | 'key' | 'write' | 'read'>): string {
  return `${esc(f.kind)} — ${esc(store)}/${esc(f.key)} — ${esc(f.write)}${f.read === undefined ? '' : ` (read ${esc(f.read)})`}`;
}

/**
 * A class's section: how to read it, its count, then one collapsed group per incident holding
 * the incident's findings of this class (at most {@link KEYS_LISTED_PER_INCIDENT} listed, the rest
 * counted and found in results.json by their `incident`); the first {@link DRILL_DOWN_PER_CLASS}
 * listed open into their key's drill-down.
 */
export function classSection(cls: FindingClass): HtmlSection {
  return {
    id: `class-${cls}`,
    title: CLASS_TITLES[cls],
    nav: CLASS_TITLES[cls].split(' (')[0].replace(/ losses$/, ''),
    render: ({ db, results: r, memo }) => {
      // the violations section lists the keys' own findings; reads and the runtime map have theirs
      const total = cls === 'violation' ? r.summary[cls] - kindTotal(r, READ_KINDS) - kindTotal(r, PARTITION_KINDS) : r.summary[cls];
      const help = `<p class="howto">${esc(CLASS_HELP[cls])}</p>`;
      const other = cls === 'violation' && total < r.summary[cls] ? `<p>Read and runtime-map violations: see <a href="#reads">Read findings</a> and <a href="#runtime-map">Runtime-map findings</a>.</p>` : '';
      if (total === 0) return `${help}\n<p>None${cls === 'violation' ? " among the keys' own findings" : ''}.</p>${other}`;
      const keyLog = memo('key-log', () => new KeyLogReader(db));
      const details = memo('drill-details', () => new DrillDetails(db, r));
      const byId = memo('incidents-by-id', () => new Map((r.incidents ?? []).map((i) => [i.id, i])));
      const groups = classGroups(r, cls);
      let held = 0;
      const items = groups.map((g) => {
        held += g.held;
        const inc = g.incident === null ? undefined : byId.get(g.incident);
        const head = inc === undefined ? `${esc(g.held)} not grouped` : `#${esc(inc.id)} ${esc(inc.store)}/${esc(inc.partition ?? '?')}: ${esc(g.held)} ${esc(cls)} finding${g.held === 1 ? '' : 's'}, ${esc(causeText(inc.cause))}`;
        const keys = g.listed.map(({ finding: f, drilled }) =>
          drilled ? `<details><summary>${findingLabel(f.store, f)}</summary>\n${drillDown(db, f, keyLog, details)}\n</details>` : `<div class="plain">${findingLabel(f.store, f)}</div>`,
        );
        const rest = g.held - g.listed.length;
        const more = rest <= 0 ? '' : `\n<p class="more">${esc(rest)} more: results.json, the ${esc(cls)} findings with <code>"incident": ${esc(g.incident)}</code>.</p>`;
        return `<details class="group"><summary>${head}</summary>\n${keys.join('\n')}${more}\n</details>`;
      });
      const beyond = total > held ? `<p>${esc(total - held)} more in the ledger's findings table.</p>` : '';
      return `${help}
<p>${esc(total)} finding${total === 1 ? '' : 's'}, grouped by incident. Each group opens into its first ${KEYS_LISTED_PER_INCIDENT} keys; the first ${DRILL_DOWN_PER_CLASS} keys of the class open into the key's writes, the faults and runtime map around the ack, and the final read.</p>
${items.join('\n')}
${beyond}${other}`;
    },
  };
}
