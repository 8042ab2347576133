import { describe, expect, it } from 'vitest';
import { nodeRoleFields } from './runtime.js';

describe('nodeRoleFields (issue 14: spare nodes in the cluster config)', () => {
  const ids = ['n1', 'n2', 'n3', 'n4'];
  it('a spare is no preferred primary and says so; the others are preferred primaries unless named otherwise', () => {
    expect(ids.map((id) => nodeRoleFields({ nodeIds: ids, spares: ['n4'] }, id))).toEqual([
      { preferredPrimary: true },
      { preferredPrimary: true },
      { preferredPrimary: true },
      { preferredPrimary: false, spare: true },
    ]);
    expect(ids.map((id) => nodeRoleFields({ nodeIds: ids, spares: ['n4'], preferredPrimaries: ['n1', 'n3'] }, id))).toEqual([
      { preferredPrimary: true },
      { preferredPrimary: false },
      { preferredPrimary: true },
      { preferredPrimary: false, spare: true },
    ]);
    expect(nodeRoleFields({ nodeIds: ids }, 'n4')).toEqual({ preferredPrimary: true });
  });
  it('refuses a spare that is not a node, or one named a preferred primary, in one line', () => {
    expect(() => nodeRoleFields({ nodeIds: ids, spares: ['n9'] }, 'n1')).toThrow('spare node "n9" is not one of the nodes (n1, n2, n3, n4)');
    expect(() => nodeRoleFields({ nodeIds: ids, spares: ['n4'], preferredPrimaries: ['n4'] }, 'n4')).toThrow('spare node "n4" cannot be a preferred primary');
  });
});
