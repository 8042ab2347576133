import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { claims, contractRules, type Contract } from '../../ledger/contract.js';
import { exportHistory } from '../../ledger/history-export.js';
import { parseHistory, validateHistory, type History } from '../../ledger/history-format.js';
import { importHistory } from '../../ledger/history-import.js';
import type { Judgement, RuleFinding } from '../../ledger/history-findings.js';
import { judgeHistory } from '../../ledger/history-rules.js';
import { FIXTURES } from '../../ledger/test-support/fixtures.js';
import { contractArb } from '../../ledger/test-support/random-contract.js';
import { buildV2, planV2Arb } from '../../ledger/test-support/random-history-v2.js';
import { buildResults } from '../../reports/results.js';
import { zarisContract } from '../targets/zaris-contract.js';
import { loadRunFacts } from './run-facts.js';
import { verifyLedger } from './verifier.js';

/** A fixed seed: `make test` is deterministic (ZARIS_PROPERTY_SEED=random explores). */
const SEED = process.env.ZARIS_PROPERTY_SEED === 'random' ? Date.now() : Number(process.env.ZARIS_PROPERTY_SEED ?? 20260123);

/** The stores of every generated history (ledger/test-support/random-history-v2.ts). */
const STORES = [
  { name: 'sync3', replicationFactor: 3, ackMode: 'sync' as const },
  { name: 'async3', replicationFactor: 3, ackMode: 'async' as const },
  { name: 'rf1', replicationFactor: 1, ackMode: 'sync' as const },
];

const open: Database.Database[] = [];
afterEach(() => {
  while (open.length > 0) open.pop()!.close();
});
const work = mkdtempSync(join(tmpdir(), 'zaris-certify-contract-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const canon = (f: { class: string; kind: string; store: string; key: string | null; write: string | null; partition?: number | null; read?: string | null }): string =>
  JSON.stringify([f.class, f.kind, f.store, f.key, f.write, f.partition ?? null, f.read ?? null]);

function withContract(h: History, c: Contract | undefined): History {
  const run = { ...h.run! };
  if (c === undefined) delete run.contract;
  else run.contract = c;
  return validateHistory(JSON.parse(JSON.stringify({ ...h, run })));
}

function sqlFindings(h: History): { verdict: string; findings: string[] } {
  const db = importHistory(h, ':memory:');
  open.push(db);
  const v = verifyLedger(db);
  const rows = db.prepare('SELECT class, kind, store, key, write, partition, read FROM findings').all() as RuleFinding[];
  return { verdict: v.verdict, findings: rows.map(canon).sort() };
}

/** The rules a contract leaves out can yield no finding: checked on one judgement. */
function expectOnlyDeclaredRules(j: Judgement, c: Contract, beyondBudget: boolean): void {
  const r = contractRules(c);
  for (const f of j.findings) {
    // an allowed class appears only where the contract claims it (beyond-budget: and the run is past the budget)
    if (f.class === 'rf1' || f.class === 'async-ack') expect(claims(c, f.class)).toBe(true);
    if (f.class === 'beyond-budget') expect(claims(c, 'beyond-budget') && beyondBudget).toBe(true);
    // a check whose parameter the contract does not declare is not made
    if (f.kind === 'replication-lag') expect(r.asyncLagMs).not.toBeNull();
    if (f.kind === 'stale-read') expect(r.staleReads).toBe(true);
    if (f.kind === 'under-replicated-ack') expect(c.stores.find((s) => s.name === f.store)?.ackDurableOn).toBe('majority');
  }
}

describe('the verifier applies exactly the rules the contract declares', () => {
  it(`property: both verifiers agree under any contract, and an undeclared rule yields no finding of its class or kind (seed ${SEED})`, () => {
    const seen = { classes: new Set<string>(), unclaimedLosses: 0 };
    fc.assert(
      fc.property(planV2Arb, contractArb(STORES), (plan, c) => {
        const h = withContract(buildV2(plan), c);
        const j = judgeHistory(h);
        const sql = sqlFindings(h);
        expect(sql.findings).toEqual(j.findings.map(canon).sort());
        expect(sql.verdict).toBe(j.verdict);
        expectOnlyDeclaredRules(j, c, h.run!.beyondBudget);
        for (const f of j.findings) seen.classes.add(f.class);
        if (j.findings.some((f) => f.kind === 'lost' && f.class === 'violation' && f.store === 'rf1') && !claims(c, 'rf1')) seen.unclaimedLosses++;
      }),
      { numRuns: 400, seed: SEED },
    );
    // the generator reached every class under some contract, and losses a contract left unclaimed
    expect([...seen.classes].sort()).toEqual(['async-ack', 'beyond-budget', 'info', 'rf1', 'violation']);
    expect(seen.unclaimedLosses).toBeGreaterThan(5);
  });

  it(`property: a contract claiming nothing and declaring no parameter turns every loss into a violation, and leaves out stale reads and replication lag (seed ${SEED})`, () => {
    fc.assert(
      fc.property(planV2Arb, (plan) => {
        const h0 = buildV2(plan);
        const none: Contract = { ...zarisContract({ stores: STORES, asyncLagMs: 1000, leaseMs: null }), claims: [], asyncLagMs: { value: null, source: 's' }, linearizableReads: { value: false, source: 's' } };
        const j = judgeHistory(withContract(h0, none));
        const letter = judgeHistory(h0);
        expect(j.findings.filter((f) => f.kind === 'lost').every((f) => f.class === 'violation')).toBe(true);
        expect(j.findings.some((f) => f.kind === 'stale-read' || f.kind === 'replication-lag')).toBe(false);
        // every key the letter finds lost is still lost: only its class changes
        expect(j.findings.filter((f) => f.kind === 'lost').map((f) => f.key).sort()).toEqual(letter.findings.filter((f) => f.kind === 'lost').map((f) => f.key).sort());
      }),
      { numRuns: 200, seed: SEED + 1 },
    );
  });

  it("Zaris's own contract judges exactly as the letter: the fixtures and generated histories are unchanged", () => {
    const zarisOf = (h: History): Contract => zarisContract({ stores: h.stores, asyncLagMs: h.run!.asyncLagMaxMs, leaseMs: h.run!.leaseMs ?? null });
    for (const f of FIXTURES.filter((x) => x.history.format === 'zaris-history/2')) {
      const h = validateHistory(JSON.parse(JSON.stringify(f.history)));
      const with_ = withContract(h, zarisOf(h));
      expect(judgeHistory(with_), f.name).toEqual(judgeHistory(h));
      expect(sqlFindings(with_), f.name).toEqual(sqlFindings(h));
    }
    fc.assert(
      fc.property(planV2Arb, (plan) => {
        const h = buildV2(plan);
        expect(judgeHistory(withContract(h, zarisOf(h)))).toEqual(judgeHistory(h));
      }),
      { numRuns: 300, seed: SEED + 2 },
    );
  });

  it('the contract round-trips: history -> ledger (meta contract) -> export -> history, and into results.json', () => {
    fc.assert(
      fc.property(planV2Arb, contractArb(STORES), fc.nat(1_000_000), (plan, c, n) => {
        const h = withContract(buildV2(plan), c);
        const db = importHistory(h, ':memory:');
        open.push(db);
        const facts = loadRunFacts(db);
        expect(facts.contract).toEqual(c);
        expect(facts.contractOrigin).toBe('ledger');
        const results = buildResults(db, verifyLedger(db));
        expect(JSON.parse(JSON.stringify(results.contract))).toEqual(expect.objectContaining({ target: c.target, origin: 'ledger', declaration: c }));
        const file = join(work, `h${n}.json`);
        exportHistory(db, file);
        const back = parseHistory(readFileSync(file, 'utf8'));
        expect(back.run!.contract).toEqual(c);
        rmSync(file, { force: true });
      }),
      { numRuns: 40, seed: SEED + 3 },
    );
  });

  it('a history without a contract is judged by the letter, and says so', () => {
    const h = validateHistory(JSON.parse(JSON.stringify(FIXTURES.find((f) => f.history.format === 'zaris-history/2')!.history)));
    const db = importHistory(h, ':memory:');
    open.push(db);
    const r = buildResults(db, verifyLedger(db));
    expect(r.contract?.origin).toBe('letter');
    expect(r.contract?.target).toBe('history-format.md');
    expect(r.contract?.rules.map((x) => x.rule)).toContain('replication-lag');
  });

  it('a ledger whose stored contract is not valid is a harness error naming the field', () => {
    const h = validateHistory(JSON.parse(JSON.stringify(FIXTURES.find((f) => f.history.format === 'zaris-history/2')!.history)));
    const db = importHistory(h, ':memory:');
    open.push(db);
    db.prepare("INSERT INTO meta (key, value) VALUES ('contract', ?)").run(JSON.stringify({ format: 'zaris-contract/1', target: 'x' }));
    expect(() => verifyLedger(db)).toThrow(/^ledger: meta contract\.stores must be an array$/);
  });
});
