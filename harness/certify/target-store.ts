/**
 * Set-up and workload of a target other than Zaris: its session started (nodes, adapters, watch,
 * workload) and its cluster, version, client options and contract recorded.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { META } from '../../ledger/schema.js';
import { describeContract } from '../../ledger/contract-judged.js';
import type { RunClock } from '../clock.js';
import { createPrng } from '../nemesis/prng.js';
import { declarationOf, type Target, type TargetRuntime } from '../targets/target.js';
import { startTargetSession } from '../targets/target-session.js';
import type { CertifyOptions } from './options.js';
import type { RunMeta } from './run-meta.js';
import type { RunState } from './run-state.js';
import type { RunSetUp } from './setup.js';
import { noPolicy, type RunStore } from './workload-start.js';

/**
 * Starts the target's session (`state.session`, closed at the run's end: its cluster Healthy, its
 * watch and workload made, neither started), writes cluster.json (with the target's contract),
 * asks the nodes' binaries for the target's version (meta `versions`), and writes the run config
 * again with the adapter's client options and the declared lease, and the meta `contract`.
 * @throws WorldError when the target's cluster does not start or never becomes Healthy.
 */
export async function startTargetStore(c: { o: CertifyOptions; target: Target; runtime: TargetRuntime; run: RunSetUp; meta: RunMeta; clock: RunClock; log: (line: string) => void; state: RunState }): Promise<RunStore> {
  const { o, target, runtime, clock, log, state } = c;
  const { runDir, ledger, seed } = c.run;
  const { identity, runConfig } = c.meta;
  const rng = createPrng(seed ^ 0x5eed);
  const session = await startTargetSession({ target, runtime, runDir, ledger, clock, writersPerStore: o.writersPerStore, keysPerWriter: o.keysPerWriter, rate: o.rate, random: () => rng.next(), readsOff: o.readsOff, log });
  state.session = session;
  writeFileSync(path.join(runDir, 'cluster.json'), `${JSON.stringify({ target: target.name, ...session.cluster, contract: target.contract }, null, 2)}\n`);
  identity.targetVersion = await target.version(runtime.binaryRunner).catch((e: unknown) => `unknown (${(e as Error).message.split('\n')[0]})`);
  c.meta.writeVersions();
  log(`target ${identity.targetVersion}, client ${identity.clientLibrary}`);
  state.watch = session.watch;
  state.workload = session.workload;
  runConfig.clientOptions = session.clientOptions;
  runConfig.leaseMs = session.watch.leaseMs;
  ledger.setMeta(META.runConfig, JSON.stringify(runConfig));
  ledger.setMeta(META.contract, JSON.stringify(declarationOf(target.contract)));
  log(`workload client: ${target.clientLibrary} through the ${target.name} adapter (operation bound ${String(session.clientOptions.operationTimeoutMs)} ms); ${describeContract(target.contract)}`);
  return { watch: session.watch, workload: session.workload, policy: noPolicy(), metricsEndpoints: [] };
}
