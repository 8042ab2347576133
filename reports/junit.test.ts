import { describe, expect, it } from 'vitest';
import { emptySummary, FINDING_KINDS } from '../harness/verifier/verifier.js';
import { buildJunitXml } from './junit.js';
import type { Results } from './results.js';

function results(over: Partial<Results> = {}): Results {
  return {
    verdict: 'FAILED',
    exitCode: 1,
    rules: 'zaris-history/2',
    asyncLagMaxMs: 1000,
    leaseMs: 2100,
    runtime: 'process',
    seed: 1,
    durationMs: 1000,
    scheduleDigest: null,
    counts: { attempted: 3, acknowledged: 3, failed: 0, indeterminate: 0 },
    faults: { kill: 1, stop: 0, pause: 0, partition: 0 },
    failover: { count: 0, p50Ms: 0, p95Ms: 0, maxMs: 0 },
    summary: { ...emptySummary(), violation: 2, rf1: 1 },
    kinds: Object.fromEntries(FINDING_KINDS.map((k) => [k, 0])) as Results['kinds'],
    readsChecked: 0,
    stores: [
      { name: 'sync3', replicationFactor: 3, ackMode: 'sync', acknowledged: 2, summary: { ...emptySummary(), violation: 2 } },
      { name: 'rf1', replicationFactor: 1, ackMode: 'sync', acknowledged: 1, summary: { ...emptySummary(), rf1: 1 } },
    ],
    findings: [
      { class: 'violation', kind: 'lost', store: 'sync3', key: 'a<&>"\'', write: 'w]]>1' },
      { class: 'violation', kind: 'unexpected', store: 'sync3', key: 'b\u0001', write: 'x' },
      { class: 'rf1', kind: 'lost', store: 'rf1', key: 'c', write: 'w3' },
    ],
    incidents: [],
    availability: { verdict: 'OK', boundMs: 5000, measured: true, stalls: [] },
    retries: {},
    ...over,
  };
}

const count = (xml: string, re: RegExp): number => (xml.match(re) ?? []).length;

describe('buildJunitXml', () => {
  it('has a verdict test case, a test case per store and per class, failing where violations are', () => {
    const xml = buildJunitXml(results());
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    expect(count(xml, /<testcase /g)).toBe(1 + 2 + 5 + 1);
    expect(xml).toContain('<testsuites name="zaris-certify" tests="9" failures="3" errors="0">');
    expect(xml).toMatch(/<testcase classname="zaris-certify.availability" name="no-stalls">\s*<system-out>no node silent and no partition Unavailable longer than 5000 ms/);
    expect(xml).toMatch(/<testcase classname="zaris-certify.verdict" name="certified">\s*<failure type="FAILED" message="FAILED: 2 violations">/);
    expect(xml).toMatch(/<testcase classname="zaris-certify.stores" name="sync3">\s*<failure type="violation" message="2 violations in store sync3">/);
    expect(xml).toMatch(/<testcase classname="zaris-certify.stores" name="rf1">\s*<system-out>/);
    expect(xml).toMatch(/<testcase classname="zaris-certify.classes" name="violation">\s*<failure type="violation" message="2 violations">/);
    expect(xml).toMatch(/<testcase classname="zaris-certify.classes" name="rf1">\s*<system-out>1 losses allowed by replication factor 1/);
    expect(count(xml, /<failure /g)).toBe(3);
    expect(xml).toContain('<property name="verdict" value="FAILED"/>');
  });

  it('escapes what the store and the ledger wrote', () => {
    const xml = buildJunitXml(results());
    expect(xml).toContain('lost sync3/a&lt;&amp;&gt;"\' w]]&gt;1');
    expect(xml).not.toContain('a<&>');
    expect(xml).toContain('unexpected sync3/b\uFFFD x');
    expect(xml).not.toContain('\u0001');
    const reason = buildJunitXml(results({ verdict: 'INCONCLUSIVE', exitCode: 2, inconclusiveReason: 'cluster "never" <healed>', summary: emptySummary(), findings: [] }));
    // '>' is legal in an attribute value; '<', '&' and '"' are not
    expect(reason).toContain('<property name="inconclusiveReason" value="cluster &quot;never&quot; &lt;healed>"/>');
    // the verdict case fails with the reason; the store summaries still say sync3 had violations
    expect(count(reason, /<failure /g)).toBe(2);
  });

  it('fails the verdict test case of an INCONCLUSIVE run: a CI reading junit does not see green', () => {
    const xml = buildJunitXml(
      results({ verdict: 'INCONCLUSIVE', exitCode: 2, inconclusiveReason: 'no write was acknowledged', summary: emptySummary(), findings: [], stores: [{ name: 'sync3', replicationFactor: 3, ackMode: 'sync', acknowledged: 0, summary: emptySummary() }] }),
    );
    expect(count(xml, /<failure /g)).toBe(1);
    expect(xml).toContain('<testsuites name="zaris-certify" tests="8" failures="1" errors="0">');
    expect(xml).toMatch(/<testcase classname="zaris-certify.verdict" name="certified">\s*<failure type="INCONCLUSIVE" message="INCONCLUSIVE: no write was acknowledged">/);
  });

  it('lists read and partition findings in the violations', () => {
    const xml = buildJunitXml(
      results({
        summary: { ...emptySummary(), violation: 2 },
        findings: [
          { class: 'violation', kind: 'stale-read', store: 'sync3', key: 'k1', write: null, read: 'r7' },
          { class: 'violation', kind: 'epoch-conflict', store: 'sync3', key: null, write: null, partition: 4 },
        ],
      }),
    );
    expect(xml).toContain('stale-read sync3/k1 (absent) (read r7)');
    expect(xml).toContain('epoch-conflict sync3 partition 4');
  });

  it('passes every case of a clean run', () => {
    const clean = results({ verdict: 'CERTIFIED', exitCode: 0, summary: emptySummary(), findings: [], stores: [{ name: 'sync3', replicationFactor: 3, ackMode: 'sync', acknowledged: 9, summary: emptySummary() }] });
    const xml = buildJunitXml(clean);
    expect(count(xml, /<failure /g)).toBe(0);
    expect(xml).toContain('failures="0"');
    expect(count(xml, /<testcase /g)).toBe(8);
  });

  it('fails the availability case on a stall, apart from the verdict case', () => {
    const clean = results({ verdict: 'CERTIFIED', exitCode: 0, summary: emptySummary(), findings: [], stores: [{ name: 'sync3', replicationFactor: 3, ackMode: 'sync', acknowledged: 9, summary: emptySummary() }] });
    const xml = buildJunitXml({
      ...clean,
      availability: { verdict: 'FAILED', boundMs: 5000, measured: true, stalls: [{ kind: 'node', why: 'no-answer', node: 'n1', fromMs: 2_276_000, toMs: 2_399_000, durationMs: 123_000, loopMaxMs: 118_000 }] },
    });
    expect(count(xml, /<failure /g)).toBe(1);
    expect(xml).toContain('<testsuites name="zaris-certify" tests="8" failures="1" errors="0">');
    expect(xml).toMatch(/<testcase classname="zaris-certify.verdict" name="certified"\/>/);
    expect(xml).toMatch(/<testcase classname="zaris-certify.availability" name="no-stalls">\s*<failure type="stall" message="1 stall longer than 5000 ms with no fault touching them">node n1 did not answer for 123.0 s, from 2276.0 s to 2399.0 s, with no fault touching it \(longest event-loop delay it reported: 118000 ms\)<\/failure>/);
  });
});
