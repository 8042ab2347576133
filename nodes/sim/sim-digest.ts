/** The run's behaviour digest: an FNV-1a style hash of its events and final state (`make sim`'s `digest=`). */

/**
 * Folds a run's events into one 32-bit hash, so that one seed gives one digest and a refactoring
 * that keeps the digest of a batch behaved the same (sim-digest.test.ts). Times are mixed at µs
 * resolution (ms × 1000, rounded).
 */
export class RunDigest {
  private h = 0x811c9dc5;

  /** Mixes three numbers into the digest, in order (`c` a time in ms, or any number; default 0). */
  mix(a: number, b: number, c = 0): void {
    let h = this.h;
    h = Math.imul(h ^ a, 0x01000193);
    h = Math.imul(h ^ b, 0x01000193);
    h = Math.imul(h ^ Math.round(c * 1000), 0x01000193);
    this.h = h;
  }

  /** The digest so far: 8 lowercase hex digits. */
  hex(): string {
    return (this.h >>> 0).toString(16).padStart(8, '0');
  }
}
