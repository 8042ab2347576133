/**
 * The neutral history format, versions `zaris-history/1` and `zaris-history/2`
 * (shared/cases/history-format.md): one certification run as small JSON, independent of the
 * ledger's tables, so that the verifier can be fed hand-made histories and histories recorded
 * elsewhere (the store's simulation emits v2). A v1 file is judged by the v1 rules, a v2 file by
 * the v2 rules (ledger/history-rules.ts). `export` writes v2.
 *
 * Times are milliseconds since the run started; ids are strings. This module uses nothing above
 * ledger/ (the store's simulation imports it).
 *
 * Its shapes live in history-types.ts, the reading of a history in history-validate.ts; this
 * module is their public face.
 */
export * from './history-types.js';
export * from './history-validate.js';
