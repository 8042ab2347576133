import path from 'node:path';
import pg from 'pg';
import type { RuntimeKind } from '../../runtime/runtime.js';
import { missingExecutable, packageVersion, processRuntimeMissing, versionFromBinary, type BinaryRunner } from '../installed.js';
import type { ClientOptions, ErrorOutcome, LaunchContext, NodeLaunch, OwnershipSampler, Target, TargetClient, TargetCluster, TargetContract, TargetScope } from '../target.js';
import { checkTargetContract } from '../target.js';
import { patroniContract, PATRONI_DEFAULT_MAXIMUM_LAG_ON_FAILOVER } from './patroni-contract.js';
import { leaderOf, patroniViews } from './patroni-nodes.js';
import { PatroniSampler } from './patroni-ownership.js';
import { PgClient, TABLE } from './pg-client.js';
import { classifyPgError } from './pg-outcome.js';

/** The Debian packages' binaries (postgresql-15, patroni 3, etcd-server 3.4 on bookworm). */
export const PG_BIN_DIR = '/usr/lib/postgresql/15/bin';
export const PATRONI_BINARY = '/usr/bin/patroni';
export const PATRONI_ETCD_BINARY = '/usr/bin/etcd';

/**
 * The shell loop Patroni runs under (`sh -c LOOP patroni <binary> <config>`): started again 1 s
 * after it exits with a failure, until it exits cleanly, like systemd's Restart=on-failure in
 * Debian's patroni.service. A kill of the node reaches the loop and Patroni alike (one group).
 */
export const PATRONI_SUPERVISOR = 'until "$1" "$2"; do sleep 1; done';

/** PATRONI_SYNC: `off` (asynchronous replication, the default) or `strict`. */
export type PatroniSync = 'off' | 'strict';

/** Options of {@link PostgresPatroniTarget}; every field has a default. */
export interface PostgresPatroniTargetOptions {
  sync?: PatroniSync;
  /** Patroni's ttl, s (default 20). */
  ttlS?: number;
  /** Patroni's loop_wait, s (default 2). */
  loopWaitS?: number;
  /** Patroni's retry_timeout, s (default 5; ttl >= loop_wait + 2 x retry_timeout). */
  retryTimeoutS?: number;
  /** Name of the one store (default `postgres`). */
  store?: string;
}

/**
 * PostgreSQL 15 with Patroni 3 as a target: three nodes, each running an etcd member (the three
 * form Patroni's coordination store), Patroni, and the PostgreSQL Patroni starts (one primary,
 * two streaming replicas; n-th node bootstraps whichever Patroni wins the initialize key). The
 * PostgreSQL processes run as the `postgres` user (PostgreSQL refuses root); a kill or pause of a
 * node reaches its postmaster too (Patroni starts it in a session of its own: `wholeNode`).
 * Writes are one-row upserts into one table, on the primary Patroni names (pg-client.ts). Data
 * folders survive kills and restarts; Patroni rewinds (pg_rewind) a replaced primary.
 * Contract: patroni-contract.ts (PATRONI_SYNC=off: async-ack; strict: no loss).
 */
export class PostgresPatroniTarget implements Target {
  readonly name = 'postgres-patroni' as const;
  readonly nodeIds = ['n1', 'n2', 'n3'] as const;
  readonly ports = { etcd: 2379, etcdPeer: 2380, patroni: 8008, postgres: 5432 } as const;
  readonly contract: TargetContract;
  readonly clientLibrary = `pg ${packageVersion('pg')}`;
  readonly store: string;
  readonly sync: PatroniSync;
  readonly options: Readonly<Record<string, unknown>>;
  readonly scope: TargetScope;
  private readonly ttlS: number;
  private readonly loopWaitS: number;
  private readonly retryTimeoutS: number;

  constructor(opts: PostgresPatroniTargetOptions = {}) {
    this.sync = opts.sync ?? 'off';
    this.store = opts.store ?? 'postgres';
    this.ttlS = opts.ttlS ?? 20;
    this.loopWaitS = opts.loopWaitS ?? 2;
    this.retryTimeoutS = opts.retryTimeoutS ?? 5;
    this.contract = patroniContract({ store: this.store, nodes: this.nodeIds.length, sync: this.sync, ttlS: this.ttlS, loopWaitS: this.loopWaitS, maximumLagOnFailover: PATRONI_DEFAULT_MAXIMUM_LAG_ON_FAILOVER });
    checkTargetContract(this.contract);
    this.options = {
      sync: this.sync,
      synchronousMode: this.sync === 'strict',
      synchronousModeStrict: this.sync === 'strict',
      ttlS: this.ttlS,
      loopWaitS: this.loopWaitS,
      retryTimeoutS: this.retryTimeoutS,
      maximumLagOnFailover: PATRONI_DEFAULT_MAXIMUM_LAG_ON_FAILOVER,
    };
    this.scope = {
      tested: [
        'acknowledged single-row upserts on the primary Patroni names survive kills, pauses and partitions of nodes (each node: its etcd member, Patroni and PostgreSQL)',
        this.sync === 'strict' ? 'synchronous_mode_strict: no acknowledged commit lost at a failover' : 'asynchronous replication: commits lost at a failover are allowed as async-ack only when a promotion follows them',
      ],
      notTested: ['multi-row transactions and isolation levels', 'reads from replicas', 'Patroni switchover, reinit and configuration changes', 'power loss (fsync) and clock faults'],
    };
  }

  async unavailableReason(runtime: RuntimeKind): Promise<string | null> {
    // on docker the node image carries postgresql-15 and patroni (harness/docker/base-image.ts)
    if (runtime === 'docker') return null;
    return (
      missingExecutable(path.join(PG_BIN_DIR, 'postgres'), 'PostgreSQL 15', 'apt-get install postgresql-15') ??
      missingExecutable(PATRONI_BINARY, 'patroni', 'apt-get install patroni') ??
      missingExecutable(PATRONI_ETCD_BINARY, 'etcd', 'apt-get install etcd-server') ??
      processRuntimeMissing()
    );
  }

  async version(run?: BinaryRunner): Promise<string> {
    const pgv = await versionFromBinary(path.join(PG_BIN_DIR, 'postgres'), ['--version'], /PostgreSQL\)\s*(\S+)/, run);
    const pat = await versionFromBinary(PATRONI_BINARY, ['--version'], /patroni\s+(\S+)/i, run);
    return `postgresql ${pgv} (patroni ${pat})`;
  }

  partitionOf(store: string): number {
    if (store !== this.store) throw new RangeError(`postgres-patroni target has no store ${store}`);
    return 0;
  }

  /** Patroni's configuration of a node (YAML; JSON is YAML). */
  patroniConfig(nodeId: string, ctx: LaunchContext): string {
    const host = hostOf(ctx, nodeId);
    const strict = this.sync === 'strict';
    const conf = {
      scope: `zaris-${ctx.runTag}`,
      namespace: '/service/',
      name: nodeId,
      restapi: { listen: `${host}:${this.ports.patroni}`, connect_address: `${host}:${this.ports.patroni}` },
      etcd3: { hosts: ctx.cluster.nodes.map((n) => `${n.host}:${this.ports.etcd}`) },
      bootstrap: {
        dcs: {
          ttl: this.ttlS,
          loop_wait: this.loopWaitS,
          retry_timeout: this.retryTimeoutS,
          maximum_lag_on_failover: PATRONI_DEFAULT_MAXIMUM_LAG_ON_FAILOVER,
          synchronous_mode: strict,
          synchronous_mode_strict: strict,
          postgresql: {
            use_pg_rewind: true,
            parameters: { wal_level: 'replica', hot_standby: 'on', max_wal_senders: 10, max_replication_slots: 10, wal_keep_size: '512MB', wal_log_hints: 'on', max_connections: 200 },
          },
        },
        initdb: [{ encoding: 'UTF8' }, { locale: 'C' }],
      },
      postgresql: {
        listen: `${host}:${this.ports.postgres}`,
        connect_address: `${host}:${this.ports.postgres}`,
        data_dir: path.join(ctx.dataDir, 'pg'),
        bin_dir: PG_BIN_DIR,
        pgpass: path.join(ctx.dataDir, 'pgpass'),
        authentication: { superuser: { username: 'postgres', password: 'postgres' }, replication: { username: 'postgres', password: 'postgres' }, rewind: { username: 'postgres', password: 'postgres' } },
        parameters: { unix_socket_directories: ctx.dataDir },
        // the nodes' addresses: loopback on the process runtime, the run's network on docker
        pg_hba: ['local all all trust', 'host all all 0.0.0.0/0 trust', 'host replication all 0.0.0.0/0 trust'],
      },
      tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
    };
    return JSON.stringify(conf, null, 2) + '\n';
  }

  launch(nodeId: string, ctx: LaunchContext): NodeLaunch {
    const host = hostOf(ctx, nodeId);
    const peer = (h: string): string => `http://${h}:${this.ports.etcdPeer}`;
    const client = `http://${host}:${this.ports.etcd}`;
    return {
      wholeNode: true,
      files: [{ path: 'patroni.yml', content: this.patroniConfig(nodeId, ctx) }],
      processes: [
        {
          name: 'etcd',
          command: PATRONI_ETCD_BINARY,
          readyPort: 'etcd',
          args: [
            '--name', nodeId,
            '--data-dir', path.join(ctx.dataDir, 'etcd'),
            '--listen-client-urls', client,
            '--advertise-client-urls', client,
            '--listen-peer-urls', peer(host),
            '--initial-advertise-peer-urls', peer(host),
            '--initial-cluster', ctx.cluster.nodes.map((n) => `${n.id}=${peer(n.host)}`).join(','),
            '--initial-cluster-state', 'new',
            '--initial-cluster-token', `zaris-certify-${ctx.runTag}`,
            '--logger', 'zap',
            '--log-outputs', 'stderr',
          ],
        },
        {
          name: 'patroni',
          // Restarted when it fails, as Debian's patroni.service does (Restart=on-failure): Patroni 3.0
          // exits at start-up when no etcd member grants it a lease (a node restarted inside a partition)
          command: '/bin/sh',
          args: ['-c', PATRONI_SUPERVISOR, 'patroni', PATRONI_BINARY, path.join(ctx.dataDir, 'patroni.yml')],
          env: { HOME: ctx.dataDir, LANG: 'C.UTF-8', PGPASSFILE: path.join(ctx.dataDir, 'pgpass') },
          readyPort: 'patroni',
          // after a kill, PostgreSQL's crash recovery runs before Patroni answers (20 s was too short once)
          readyTimeoutMs: 90_000,
          user: 'postgres',
        },
      ],
    };
  }

  /** Waits for a primary (at most 120 s), then creates the table on it. @throws Error (one line). */
  async prepare(cluster: TargetCluster): Promise<void> {
    const deadline = Date.now() + 120_000;
    let last = 'no primary yet';
    while (Date.now() < deadline) {
      const l = leaderOf(await patroniViews(cluster, 1_000));
      if (l) {
        const h = cluster.nodes.find((n) => n.id === l.node)!.host;
        const c = new pg.Client({ host: h, port: cluster.ports.postgres, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 2_000, query_timeout: 10_000 });
        c.on('error', () => undefined);
        try {
          await c.connect();
          await c.query(`CREATE TABLE IF NOT EXISTS ${TABLE} (k text PRIMARY KEY, v text, ver bigint NOT NULL, present boolean NOT NULL)`);
          return;
        } catch (e) {
          last = `creating the table on ${l.node}: ${e instanceof Error ? e.message : String(e)}`;
        } finally {
          await c.end().catch(() => undefined);
        }
      }
      await new Promise((r) => setTimeout(r, 1_000));
    }
    throw new Error(`postgres-patroni: the cluster did not come up within 120 s (${last})`);
  }

  client(cluster: TargetCluster, opts: ClientOptions): TargetClient {
    return new PgClient(cluster, this.store, opts);
  }

  sampler(cluster: TargetCluster): OwnershipSampler {
    return new PatroniSampler(cluster, this.store);
  }

  classifyError(error: unknown): ErrorOutcome {
    return classifyPgError(error);
  }
}

function hostOf(ctx: LaunchContext, nodeId: string): string {
  const h = ctx.cluster.nodes.find((n) => n.id === nodeId)?.host;
  if (!h) throw new Error(`unknown node ${nodeId}`);
  return h;
}
