import type { ContractJudged } from '../ledger/contract-judged.js';
import { esc, htmlTable, type HtmlSection } from './html-kit.js';

const ORIGIN: Record<ContractJudged['origin'], string> = {
  ledger: 'as the run stored it',
  'target declaration': "the run stored none (a ledger from before contracts were stored): its target's declaration",
  letter: 'the history declares none: the rules of history-format.md v2 to the letter',
  v1: 'a zaris-history/1 run: its rules have no contract parameters (listed for reference)',
};

function value(v: ContractJudged['rules'][number]['value'], rule: string): string {
  if (v === null) return rule === 'rf1' || rule === 'async-ack' ? '' : 'none';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (Array.isArray(v)) return v.length === 0 ? '(none)' : v.join(', ');
  return `${v} ms`;
}

/**
 * The "Contract judged" section of report.html: which store's contract judged the run and where
 * it came from, the loss classes it claims, each rule (judged or not) with its parameter, what it
 * means and its source, and the stores with what their acks are durable on. Empty-safe: a
 * results.json without a contract (an older one) says so.
 */
export const contractSection: HtmlSection = {
  id: 'contract',
  title: 'Contract judged',
  render: ({ results: r }) => {
    const c = r.contract;
    if (c === undefined) return '<p>No contract recorded in these results.</p>';
    const claims = c.declaration.claims.map((k) => k.class);
    return `<p class="howto">The verifier applies exactly the rules this contract declares: a loss class it does not claim excuses no loss, a check whose parameter it does not declare is not made.</p>
<p>Contract of <b>${esc(c.target)}</b> (${esc(ORIGIN[c.origin])}); it claims ${claims.length === 0 ? '<b>no loss at all</b>' : `<b>${esc(claims.join(', '))}</b>`}.</p>
${htmlTable(
  ['rule', 'judged', 'parameter', 'what it means here', 'source'],
  c.rules.map((x) => [x.rule, x.judged ? 'yes' : 'no', value(x.value, x.rule), x.meaning, x.source]),
)}
<h3>Stores</h3>
${htmlTable(
  ['store', 'RF', 'ack mode', 'an ack is durable on', 'source'],
  c.declaration.stores.map((s) => [s.name, s.replicationFactor, s.ackMode, s.ackDurableOn, s.source]),
)}`;
  },
};
