// A harness that starts two stand-in nodes through the compiled TargetProcessRuntime, prints what
// it created as one JSON line, and then waits to be killed (SIGKILL: no exit handler runs).
//   node crashing-harness.mjs <dist/harness/targets/target-process-runtime.js> <runDir> <partitions: 0|1>
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const [runtimeModule, runDir, partitions] = process.argv.slice(2);
const { TargetProcessRuntime } = await import(runtimeModule);
const peer = fileURLToPath(new URL('./stand-in-peer.mjs', import.meta.url));
const target = {
  ports: { main: 7700, side: 7701 },
  launch(nodeId, ctx) {
    const host = ctx.cluster.nodes.find((n) => n.id === nodeId).host;
    return {
      processes: [
        { name: 'main', command: process.execPath, args: [peer, host, '7700'], readyPort: 'main' },
        { name: 'side', command: process.execPath, args: [peer, host, '7701'], readyPort: 'side' },
      ],
    };
  },
};
const rt = new TargetProcessRuntime({ runTag: `c${randomBytes(4).toString('hex')}`, partitions: partitions === '1' });
await rt.start({ runDir, target, nodeIds: ['n1', 'n2'] });
console.log(JSON.stringify({ pids: [...rt.pidsOf('n1'), ...rt.pidsOf('n2')], dataDir: rt.dataDirOf('n1'), chains: rt.iptablesChains() }));
setInterval(() => {}, 60_000);
