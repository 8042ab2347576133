/**
 * FAULTS= parsing: a list of kinds, `all`, `none`, `membership` or `preset:<name>`, to the kinds
 * selected and the mix they are drawn by.
 */
import { PRESETS, PRESET_NAMES, type PresetName } from './presets.js';
import { FAULT_KINDS, type FaultKind, MEMBERSHIP_KINDS, SELECTABLE_KINDS, ScheduleError } from './schedule-types.js';

/** What FAULTS selects: the kinds, and the mix they are drawn by. */
export interface FaultSelection {
  kinds: FaultKind[];
  preset: PresetName;
}

/**
 * Parses FAULTS: a comma-separated list of kinds (`kill,stop,pause,partition,power,clock,
 * client-cut`, and `membership` for join, leave and rebalance, or those three by name; spaces
 * allowed; repeats ignored) drawn by the default mix, `all` for every kind but the membership
 * changes (they need a spare node: name `membership` to add them), `none` for a run without
 * faults, or `preset:<name>` for a named mix with its own kinds.
 * @throws ScheduleError for an empty list, an unknown kind or an unknown preset (one line naming it and the choices).
 */
export function parseFaults(text: string): FaultSelection {
  const t = text.trim().toLowerCase();
  if (t.startsWith('preset:')) {
    const name = t.slice('preset:'.length).trim();
    if (!(PRESET_NAMES as readonly string[]).includes(name)) throw new ScheduleError(`FAULTS: unknown preset "${name}" (choose from ${PRESET_NAMES.join(', ')})`);
    const p = PRESETS[name as PresetName];
    return { kinds: [...p.kinds], preset: p.name };
  }
  return { kinds: parseFaultKinds(text), preset: 'random' };
}

const KIND_CHOICES = `${FAULT_KINDS.join(', ')}, membership (${MEMBERSHIP_KINDS.join(', ')})`;

/**
 * Parses a FAULTS list of kinds (no preset): see {@link parseFaults}. Returns the kinds in
 * {@link SELECTABLE_KINDS} order.
 * @throws ScheduleError for an empty list or an unknown kind.
 */
export function parseFaultKinds(text: string): FaultKind[] {
  const parts = text
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter((p) => p.length > 0);
  if (parts.length === 0) throw new ScheduleError(`FAULTS is empty: give a comma-separated list of ${KIND_CHOICES} (or all, none, preset:<name>)`);
  if (parts.length === 1 && parts[0] === 'none') return [];
  if (parts.length === 1 && parts[0] === 'all') return [...FAULT_KINDS];
  const set = new Set<FaultKind>();
  for (const p of parts) {
    if (p === 'membership') {
      for (const k of MEMBERSHIP_KINDS) set.add(k);
      continue;
    }
    if (!(SELECTABLE_KINDS as readonly string[]).includes(p)) {
      throw new ScheduleError(`FAULTS: unknown fault kind "${p}" (choose from ${KIND_CHOICES}, or all, none, preset:<name>)`);
    }
    set.add(p as FaultKind);
  }
  return SELECTABLE_KINDS.filter((k) => set.has(k));
}
