/**
 * A mistake of the person running the CLI (missing run directory, no ledger, a history file that
 * is not JSON or not zaris-history/1). The message is one line, fit to print as is; the CLI maps
 * this error to exit code 64 (DESIGN.md §5 "64 bad arguments").
 */
export class UsageError extends Error {
  override name = 'UsageError';

  /** @param message one line; any line break is replaced by a space so the rule always holds. */
  constructor(message: string) {
    super(message.replace(/\s*[\r\n]+\s*/g, ' '));
  }
}

/** The exit code the CLI uses for a {@link UsageError} (DESIGN.md §5). */
export const USAGE_EXIT_CODE = 64;
