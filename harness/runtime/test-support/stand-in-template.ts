import { DEFAULT_MAX_FRAME_BYTES, DEFAULT_TIMING, type ClusterConfig } from '../../../nodes/cluster-config.js';

/**
 * The cluster template of the runtime tests that start stand-in nodes (stand-in-node.mjs): one
 * RF3 sync store of 8 segments, default timers, no multi-key policy; `cluster` names the test.
 */
export function standInTemplate(cluster: string): Omit<ClusterConfig, 'nodes'> {
  return {
    cluster,
    stores: [{ name: 'sync3', replicationFactor: 3, ackMode: 'sync', segments: 8 }],
    timing: { ...DEFAULT_TIMING },
    maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
    multiKeyLongTailRetryThresholdsMs: '',
  };
}
