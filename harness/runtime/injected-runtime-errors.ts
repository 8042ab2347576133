/**
 * Errors injected into a runtime on purpose (issue 22): the harness's own self-test of how a run
 * ends when the world fails it, as BUG= is the store's. Tests use it through {@link injectRuntimeErrors};
 * a person (or a CI job checking that it handles an INCONCLUSIVE run) through the variable
 * `ZARIS_CERTIFY_INJECT_RUNTIME_ERRORS` of `zaris-certify certify` (make certify), e.g.
 * `ZARIS_CERTIFY_INJECT_RUNTIME_ERRORS=partition@2:transient*8 make certify FAULTS=partition`.
 *
 * The text is a comma-separated list of `<call>[@<n>][:<how>]`:
 * - `<call>`: kill, stop, restart, pause, resume, partition, cut-client, heal, set-clock, start,
 *   or `any` (any of them);
 * - `@<n>`: the n-th attempt of that call that reaches the runtime, from 1 (default 1), counted
 *   per entry (retries count: the fault-tolerant runtime sits above the injection);
 * - `<how>`: `permanent` (default): that attempt and every later one of the call fail with a
 *   permanent error; `transient` or `transient*<k>`: k attempts in a row (default 1) fail with the
 *   transient error of a docker exec racing runc (exit 126, `read init-p: connection reset by
 *   peer`), then the call works again; `bug`: that attempt throws a TypeError, as a bug of the
 *   harness would.
 * A failed attempt does not reach the runtime.
 */
import type { FaultRuntime } from './runtime.js';
import { RETRIED_CALLS, UNRETRIED_CALLS } from './fault-tolerant-runtime.js';

/** The environment variable `zaris-certify certify` reads injections from. */
export const INJECT_ENV = 'ZARIS_CERTIFY_INJECT_RUNTIME_ERRORS';

/** A runtime method an injection can hit, by its name in the text (kebab-case). */
export const INJECTABLE_CALLS = ['kill', 'stop', 'restart', 'pause', 'resume', 'partition', 'cut-client', 'heal', 'set-clock', 'start', 'any'] as const;
export type InjectableCall = (typeof INJECTABLE_CALLS)[number];

/** One injection (see the module comment). */
export interface Injection {
  call: InjectableCall;
  /** The first attempt that fails, from 1. */
  nth: number;
  /** `transient` fails `times` attempts in a row; `permanent` every attempt from the n-th on; `bug` one attempt, with a TypeError. */
  how: 'transient' | 'permanent' | 'bug';
  /** transient only: attempts that fail in a row (>= 1). */
  times: number;
}

/** The error of a transient injection: what `docker exec` says when it races runc under load. */
export const INJECTED_TRANSIENT = 'OCI runtime exec failed: exec failed: unable to start container process: read init-p: connection reset by peer (injected)';

const METHOD: Record<Exclude<InjectableCall, 'any'>, string> = {
  kill: 'kill',
  stop: 'stop',
  restart: 'restart',
  pause: 'pause',
  resume: 'resume',
  partition: 'partition',
  'cut-client': 'cutClient',
  heal: 'heal',
  'set-clock': 'setClock',
  start: 'start',
};
const INJECTABLE_METHODS = new Set<string>([...RETRIED_CALLS, ...UNRETRIED_CALLS]);

const MAX_COUNT = 1_000_000;

/**
 * Parses the injection text (the module comment's grammar; blanks around entries ignored; an
 * empty text is no injection).
 * @throws Error (one line) naming the bad entry and the grammar.
 */
export function parseInjections(text: string): Injection[] {
  const out: Injection[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const m = /^([a-z-]+)(?:@(\d+))?(?::(permanent|bug|transient(?:\*(\d+))?))?$/.exec(entry);
    const bad = (why: string): Error => new Error(`${INJECT_ENV}: "${entry}" ${why}; expected <call>[@<n>][:permanent|transient[*<k>]|bug] with <call> one of ${INJECTABLE_CALLS.join(', ')}`);
    if (!m) throw bad('is not an injection');
    if (!(INJECTABLE_CALLS as readonly string[]).includes(m[1])) throw bad(`names no runtime call`);
    const nth = m[2] === undefined ? 1 : Number(m[2]);
    const times = m[4] === undefined ? 1 : Number(m[4]);
    if (!(nth >= 1 && nth <= MAX_COUNT)) throw bad(`counts calls from 1 to ${MAX_COUNT}`);
    if (!(times >= 1 && times <= MAX_COUNT)) throw bad(`fails from 1 to ${MAX_COUNT} attempts in a row`);
    const how = m[3] === undefined ? 'permanent' : m[3].startsWith('transient') ? 'transient' : (m[3] as 'permanent' | 'bug');
    out.push({ call: m[1] as InjectableCall, nth, how, times: how === 'transient' ? times : 1 });
  }
  return out;
}

/** The text of injections, as {@link parseInjections} reads it (its inverse). */
export function formatInjections(list: readonly Injection[]): string {
  return list.map((i) => `${i.call}@${i.nth}:${i.how === 'transient' ? `transient*${i.times}` : i.how}`).join(',');
}

/** Does attempt number `n` (from 1) of an injection's call fail? */
export function injectedFails(i: Injection, n: number): boolean {
  if (i.how === 'permanent') return n >= i.nth;
  if (i.how === 'bug') return n === i.nth;
  return n >= i.nth && n < i.nth + i.times;
}

/**
 * Wraps `rt` so that the attempts the injections name fail (see the module comment); every other
 * call and property passes through. The result is `rt`'s own type. Put it under the
 * fault-tolerant runtime so its retries meet the injected errors.
 */
export function injectRuntimeErrors<T extends FaultRuntime>(rt: T, injections: readonly Injection[]): T {
  if (injections.length === 0) return rt;
  const counts = injections.map(() => 0);
  const failure = (method: string, args: unknown[]): Error | null => {
    let err: Error | null = null;
    for (let k = 0; k < injections.length; k++) {
      const inj = injections[k];
      if (inj.call !== 'any' && METHOD[inj.call] !== method) continue;
      counts[k]++;
      if (err !== null || !injectedFails(inj, counts[k])) continue;
      const op = typeof args[0] === 'string' ? `${method} in ${args[0]}` : method;
      if (inj.how === 'bug') err = new TypeError(`injected harness bug: ${op} (attempt ${counts[k]})`);
      else if (inj.how === 'transient') err = new Error(`${rt.kind} runtime: ${op} failed (exit 126): ${INJECTED_TRANSIENT}`);
      else err = new Error(`${rt.kind} runtime: ${op} failed: refused for good (injected, attempt ${counts[k]})`);
    }
    return err;
  };
  const made = new Map<PropertyKey, unknown>();
  return new Proxy(rt, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      let f = made.get(prop);
      if (f === undefined) {
        const fn = v as (...a: unknown[]) => Promise<unknown>;
        f =
          typeof prop === 'string' && INJECTABLE_METHODS.has(prop)
            ? async (...args: unknown[]): Promise<unknown> => {
                const err = failure(prop, args);
                if (err !== null) throw err;
                return fn.apply(target, args);
              }
            : fn.bind(target);
        made.set(prop, f);
      }
      return f;
    },
  });
}
