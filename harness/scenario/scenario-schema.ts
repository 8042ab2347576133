import { SELF_TEST_BUGS } from '../../nodes/cluster-config.js';

/** A duration as a scenario writes it: a number and a unit (`500ms`, `12s`, `2m`, `1.5s`). Never negative. */
export const DURATION_PATTERN = '^[0-9]+(\\.[0-9]+)?(ms|s|m|h)$';
/** A signed duration (clock jumps): `-30s`, `+30s`, `30s`. */
export const SIGNED_DURATION_PATTERN = '^[+-]?[0-9]+(\\.[0-9]+)?(ms|s|m|h)$';
/** A step name, and a name a target binds with `as`: a letter, then letters, digits, `_` or `-`. */
export const NAME_PATTERN = '^[A-Za-z][A-Za-z0-9_-]{0,39}$';

/** The fault kinds a step can be (harness/nemesis/schedule.ts FAULT_KINDS and ADMIN_KINDS). */
export const STEP_FAULTS = ['kill', 'stop', 'pause', 'partition', 'power', 'clock', 'client-cut', 'handoff', 'regenerate', 'join', 'leave', 'rebalance'] as const;
/** The allowed-loss classes an expectation may let appear (history-format.md v2). */
export const ALLOWED_CLASSES = ['rf1', 'async-ack', 'beyond-budget'] as const;
/** The verdicts a scenario may expect. */
export const VERDICTS = ['CERTIFIED', 'FAILED', 'INCONCLUSIVE'] as const;

const duration = { type: 'string', pattern: DURATION_PATTERN };

/**
 * The JSON schema (draft 2020-12) of a scenario file (YAML; docs/scenarios.md; issue 13).
 * It checks the shape and the value formats; what needs the whole file (a target role, a step
 * named in `after`, a node beyond the cluster, fields that only fit some faults) is checked after
 * it by scenario.ts, with the same one-line errors naming the step and field.
 * `scenarios/scenario.schema.json` is this object, for editors (a test keeps them equal).
 */
export const SCENARIO_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://zaris-certify.invalid/scenario.schema.json',
  title: 'zaris-certify scenario',
  type: 'object',
  additionalProperties: false,
  required: ['nodes', 'expect', 'steps'],
  properties: {
    name: { type: 'string', pattern: NAME_PATTERN },
    nodes: { enum: [3, 5] },
    spares: { type: 'integer', minimum: 0, maximum: 3 },
    stores: {
      type: 'array',
      minItems: 1,
      items: {
        oneOf: [
          { enum: ['sync3', 'async3', 'rf1'] },
          {
            type: 'object',
            additionalProperties: false,
            required: ['name', 'replicationFactor', 'ackMode'],
            properties: {
              name: { type: 'string', pattern: NAME_PATTERN },
              replicationFactor: { type: 'integer', minimum: 1, maximum: 5 },
              ackMode: { enum: ['sync', 'async'] },
            },
          },
        ],
      },
    },
    expect: {
      oneOf: [
        { enum: [...VERDICTS] },
        {
          type: 'object',
          additionalProperties: false,
          required: ['verdict'],
          properties: {
            verdict: { enum: [...VERDICTS] },
            allow: { type: 'array', uniqueItems: true, items: { enum: [...ALLOWED_CLASSES] } },
          },
        },
      ],
    },
    seed: { type: 'integer', minimum: 0, maximum: 2147483647 },
    escalation: duration,
    eviction: duration,
    'beyond-budget': { type: 'boolean' },
    bug: { enum: [...SELF_TEST_BUGS] },
    tail: duration,
    duration,
    steps: {
      type: 'array',
      minItems: 1,
      maxItems: 200,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['fault'],
        properties: {
          name: { type: 'string', pattern: NAME_PATTERN },
          fault: { enum: [...STEP_FAULTS] },
          target: { type: 'string', minLength: 1 },
          at: duration,
          after: { type: 'string', minLength: 1 },
          delay: duration,
          wait: duration,
          duration,
          topology: { enum: ['isolate', 'halves', 'bridge', 'one-way'] },
          direction: { enum: ['in', 'out'] },
          peer: { type: 'string', minLength: 1 },
          flap: { type: 'object', additionalProperties: false, required: ['on', 'off'], properties: { on: duration, off: duration } },
          clock: {
            type: 'object',
            additionalProperties: false,
            minProperties: 1,
            maxProperties: 1,
            properties: { jump: { type: 'string', pattern: SIGNED_DURATION_PATTERN }, rate: { type: 'number', minimum: 0.25, maximum: 4 } },
          },
          count: { type: 'integer', minimum: 2, maximum: 5 },
          partition: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9_-]*/(0|[1-9][0-9]*)$' },
          to: { type: 'string', minLength: 1 },
        },
      },
    },
  },
} as const;
