import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { contractJudged } from '../ledger/contract-judged.js';
import { declarationOf } from '../harness/targets/target.js';
import { redisContract } from '../harness/targets/redis/redis-contract.js';
import { contractSection } from './contract-section.js';
import { reportContext } from './html-kit.js';
import type { Results } from './results.js';

function render(contract: Results['contract']): string {
  const db = new Database(':memory:');
  try {
    return contractSection.render(reportContext(db, { contract } as Results));
  } finally {
    db.close();
  }
}

describe('the report\'s "Contract judged" section', () => {
  it("lists Redis's rules: async-ack claimed, no lag bound so no replication-lag check, the lease of min-replicas-max-lag", () => {
    const c = declarationOf(redisContract({ store: 'redis', nodes: 3, minReplicasToWrite: 1, minReplicasMaxLagS: 1 }));
    const html = render(contractJudged(c, 'ledger', { beyondBudget: false }));
    expect(html).toContain('Contract of <b>redis-sentinel</b> (as the run stored it); it claims <b>async-ack</b>.');
    expect(html).toContain('<tr><td>replication-lag</td><td>no</td><td>none</td><td>not judged: no async lag bound declared</td>');
    expect(html).toContain('<tr><td>owner-lease</td><td>yes</td><td>4000 ms</td>');
    expect(html).toContain('<tr><td>fencing</td><td>no</td><td>no</td>');
    expect(html).toContain('<tr><td>stale-read</td><td>no</td><td>no</td>');
    // sources are escaped text
    expect(html).toContain('Redis&#39;s defaults 0 and 10');
    expect(html).toContain('<tr><td>redis</td><td>3</td><td>async</td><td>one-node</td>');
  });

  it('says when the contract claims no loss, and when the results carry none', () => {
    const none = { ...declarationOf(redisContract({ store: 'redis', nodes: 3, minReplicasToWrite: 1, minReplicasMaxLagS: 1 })), claims: [] };
    expect(render(contractJudged(none, 'target declaration', { beyondBudget: false }))).toContain("it claims <b>no loss at all</b>");
    expect(render(undefined)).toBe('<p>No contract recorded in these results.</p>');
  });
});
