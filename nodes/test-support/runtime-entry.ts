import type { Member, RuntimeEntry } from '../cluster-messages.js';

/**
 * A runtime entry for tests: partition `s/0` of store `s` at epoch 4 (term 2), active n1 since
 * epoch 1, Healthy, n1-n3 assigned and in sync (members from `member`, incarnation `<node>-i1`
 * unless `inc` names another suffix), map version 1; `over` replaces any field. The pkey follows
 * store and partition when either is overridden and pkey is not.
 */
export function runtimeEntry(over: Partial<RuntimeEntry> = {}, inc: (node: string) => string = (n) => `${n}-i1`): RuntimeEntry {
  const mm = (node: string): Member => ({ node, inc: inc(node) });
  const store = over.store ?? 's';
  const partition = over.partition ?? 0;
  return {
    pkey: `${store}/${partition}`,
    store,
    partition,
    epoch: 4,
    term: 2,
    active: mm('n1'),
    activeSince: 1,
    health: 'Healthy',
    inSync: [mm('n1'), mm('n2'), mm('n3')],
    handoffTo: null,
    syncFrom: null,
    replicas: ['n1', 'n2', 'n3'],
    mapVersion: 1,
    ...over,
  };
}
