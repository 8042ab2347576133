/**
 * Benchmark: the retry loop's overhead per operation on the no-retry path (the operation
 * resolves Ok at once), with the real clock (performance.now) and sleep.
 *
 * Run: `npx tsc -p tsconfig.build.json && node dist/nodes/client/retry-loop.bench.js [ops]`
 * (ops per round, default 1,000,000; at least 1,000,000).
 *
 * Method: rounds alternate a baseline (`await operation(1)`) and `await runWithRetry(...)`
 * over the same operation, sequentially; each figure is the median over the rounds.
 * - retryOverheadNsPerOp = median(runWithRetry ns/op) - median(baseline ns/op)
 * - opsPerSec = 1e9 / median(runWithRetry ns/op)
 * Prints one JSON line on stdout `{"retryOverheadNsPerOp":..,"opsPerSec":..}`; details and a
 * check that the no-retry path set no timer go to stderr.
 */
import { createHook } from 'node:async_hooks';
import { KvStatus } from '../kv-status.js';
import { defaultRetryDeps, runWithRetry, type RetryableResult } from './retry-loop.js';
import { DEFAULT_RETRY_OPTIONS } from './retry-policy.js';

const MIN_OPS = 1_000_000;
const ROUNDS = 5;

function parseOps(arg: string | undefined): number {
  if (arg === undefined) return MIN_OPS;
  const n = /^\d+$/.test(arg) ? Number(arg) : Number.NaN;
  if (!(n >= MIN_OPS && Number.isSafeInteger(n))) {
    process.stderr.write(`retry-loop.bench: ops must be a whole number >= ${MIN_OPS}, got ${JSON.stringify(arg)}\n`);
    process.exit(64);
  }
  return n;
}

const OK: RetryableResult = Object.freeze({ status: KvStatus.Ok, node: 'n1', epoch: 1 });
const OK_PROMISE = Promise.resolve(OK);
const operation = (_attempt: number): Promise<RetryableResult> => OK_PROMISE;
const deps = defaultRetryDeps(() => Promise.reject(new Error('the no-retry path must not refresh the map')));
const options = DEFAULT_RETRY_OPTIONS;

async function baseline(n: number): Promise<number> {
  let sink = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) sink += (await operation(1)).status;
  const ns = Number(process.hrtime.bigint() - t0);
  if (sink !== 0) throw new Error('baseline saw a non-Ok status');
  return ns / n;
}

async function withRetry(n: number): Promise<number> {
  let attempts = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const out = await runWithRetry(operation, options, deps);
    attempts += out.attempts.length;
  }
  const ns = Number(process.hrtime.bigint() - t0);
  if (attempts !== n) throw new Error(`expected ${n} attempts, saw ${attempts}`);
  return ns / n;
}

/** Counts timers created while `n` no-retry operations run (async_hooks, outside the timed rounds). */
async function timersCreated(n: number): Promise<number> {
  let timers = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'Timeout') timers++;
    },
  }).enable();
  try {
    for (let i = 0; i < n; i++) await runWithRetry(operation, options, deps);
  } finally {
    hook.disable();
  }
  return timers;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const ops = parseOps(process.argv[2]);
  await baseline(200_000);
  await withRetry(200_000);
  const base: number[] = [];
  const retry: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    base.push(await baseline(ops));
    retry.push(await withRetry(ops));
  }
  const baseNs = median(base);
  const retryNs = median(retry);
  const timers = await timersCreated(10_000);
  process.stderr.write(
    `retry-loop.bench: ${ROUNDS} rounds x ${ops} ops; baseline ${baseNs.toFixed(1)} ns/op, ` +
      `runWithRetry ${retryNs.toFixed(1)} ns/op (rounds: ${retry.map((x) => x.toFixed(1)).join(', ')}); ` +
      `timers created on the no-retry path: ${timers} in 10000 ops\n`,
  );
  if (timers !== 0) {
    process.stderr.write('retry-loop.bench: the no-retry path created timers\n');
    process.exitCode = 1;
  }
  process.stdout.write(
    `${JSON.stringify({
      retryOverheadNsPerOp: Math.round((retryNs - baseNs) * 10) / 10,
      opsPerSec: Math.round(1e9 / retryNs),
    })}\n`,
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`retry-loop.bench: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
