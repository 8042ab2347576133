#!/usr/bin/env node
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, loadClusterConfig } from './cluster-config.js';
import { validateServerProperty } from './multikey/retry-range-table.js';
import { NodeShell } from './node-shell.js';

/**
 * Entry of one store node process: `node dist/nodes/node-main.js --config FILE --id n1`
 * (also `zaris-certify node --config FILE --id n1`). Logs one JSON line per event on stdout.
 * Exit codes: 0 on SIGTERM/SIGINT, 64 for bad arguments or config, 1 when a port cannot be bound.
 */
export async function runNode(argv: string[]): Promise<NodeShell> {
  const { values } = parseArgs({
    args: argv,
    // --run tags a harness-started process so a crashed run's leftovers can be found and swept
    // --metrics-port: the metrics endpoint's port (overrides the config's metricsPort; 0 = off)
    // --join: a spare (cluster-config.ts) asks the leader to join the member set by itself
    options: { config: { type: 'string' }, id: { type: 'string' }, run: { type: 'string' }, 'metrics-port': { type: 'string' }, join: { type: 'boolean' } },
    strict: true,
  });
  if (!values.config || !values.id) throw new ConfigError('usage: zaris-certify node --config FILE --id NODE_ID [--metrics-port N] [--join]');
  let config = loadClusterConfig(values.config);
  const mp = values['metrics-port'];
  if (mp !== undefined) {
    if (!/^\d{1,5}$/.test(mp) || Number(mp) > 65_535) throw new ConfigError(`--metrics-port must be a port number or 0 (off), got "${mp}"`);
    const port = Number(mp);
    config = { ...config, nodes: config.nodes.map((n) => (n.id !== values.id ? n : port > 0 ? { ...n, metricsPort: port } : (({ metricsPort: _, ...rest }) => rest)(n))) };
  }
  const policyError = validatePolicy(config.multiKeyLongTailRetryThresholdsMs);
  if (policyError) throw new ConfigError(`invalid multiKeyLongTailRetryThresholdsMs: ${policyError}`);
  const log = (event: string, fields?: Record<string, unknown>): void => {
    process.stdout.write(JSON.stringify({ t: new Date().toISOString(), event, ...fields }) + '\n');
  };
  let shell: NodeShell;
  try {
    shell = new NodeShell(config, values.id, log, undefined, { join: values.join === true });
  } catch (e) {
    throw new ConfigError((e as Error).message);
  }
  if (config.selfTestBug) process.stderr.write(`zaris-certify node ${values.id}: SELF-TEST BUG "${config.selfTestBug}" ENABLED: this node is deliberately broken (harness self-test only)\n`);
  await shell.start();
  const stop = (sig: string): void => {
    log('stopping', { signal: sig });
    void shell.stop().then(() => process.exit(0));
    setTimeout(() => process.exit(0), 500).unref();
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  if (values.run) {
    // Started by a harness run: a Ctrl-C in its terminal reaches the whole process group, but the
    // harness must heal and read the cluster before it stops the nodes itself; and a node whose
    // harness died (kill -9) has nobody to serve: it exits instead of lingering.
    process.on('SIGINT', () => log('sigint-ignored', { reason: 'started by a harness run; the harness stops it' }));
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) stop('harness gone');
    }, 1_000).unref();
  } else {
    process.once('SIGINT', () => stop('SIGINT'));
  }
  return shell;
}

/** Seed 004: a node with an invalid multi-key retry table refuses to start. Empty = no policy. */
function validatePolicy(value: string): string | null {
  if (value === '') return null;
  return validateServerProperty(value);
}

const isMain = !!process.argv[1] && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  runNode(process.argv.slice(2)).catch((e: unknown) => {
    const err = e as Error & { code?: string };
    if (err instanceof ConfigError || err.name === 'TypeError' || (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      process.stderr.write(`zaris-certify node: ${err.message.split('\n')[0]}\n`);
      process.exit(64);
    }
    process.stderr.write(`zaris-certify node: ${err.message.split('\n')[0]}\n`);
    process.exit(1);
  });
}
