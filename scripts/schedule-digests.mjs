// Prints the schedule digests of fixed seeds, fault selections and durations from the built dist
// (dist/harness/nemesis/schedule.js), the partitions being those of the default stores (three
// stores of 64 segments). A refactoring of the nemesis must leave every line unchanged.
import { parseFaults, planSchedule, scheduleDigest, scheduleFromJson, scheduleToJson } from '../dist/harness/nemesis/schedule.js';

const stores = [
  { name: 'async3', replicationFactor: 3, ackMode: 'async' },
  { name: 'rf1', replicationFactor: 1, ackMode: 'sync' },
  { name: 'sync3', replicationFactor: 3, ackMode: 'sync' },
];
const partitions = stores.flatMap((s) => Array.from({ length: 64 }, (_, p) => ({ store: s.name, partition: p, replicationFactor: s.replicationFactor, ackMode: s.ackMode })));
const faultSets = ['all', 'kill,pause,partition', 'kill,stop,pause,partition,clock,client-cut', 'membership', 'preset:promotion', 'preset:fencing', 'preset:lag', 'preset:async', 'preset:catch-up', 'preset:liveness', 'preset:lease', 'preset:sync-ack'];
for (const seed of [1, 2, 42, 1205]) {
  for (const faults of faultSets) {
    let sel;
    try { sel = parseFaults(faults); } catch (e) { console.log(`seed=${seed} faults=${faults} ERROR ${e.message}`); continue; }
    for (const durationMs of [60_000, 7_200_000]) {
      for (const nodeCount of [3, 5]) {
        for (const beyondBudget of [false, true]) {
          let out;
          try {
            const s = planSchedule({ seed, durationMs, kinds: sel.kinds, preset: sel.preset ?? 'random', escalationTimeoutMs: 10_000, evictionTimeoutMs: 60_000, nodeCount, partitions, beyondBudget });
            out = `${s.faults.length} ${scheduleDigest(s)} ${scheduleDigest(scheduleFromJson(scheduleToJson(s)))}`;
          } catch (e) { out = `ERROR ${e.message}`; }
          console.log(`seed=${seed} faults=${faults} duration=${durationMs} nodes=${nodeCount} beyond=${beyondBudget} ${out}`);
        }
      }
    }
  }
}
