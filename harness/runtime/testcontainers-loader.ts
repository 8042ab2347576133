import type * as Testcontainers from 'testcontainers';

/** The testcontainers module (11.14), as loaded by {@link loadTestcontainers}. */
export type TestcontainersModule = typeof Testcontainers;

let loading: Promise<TestcontainersModule> | undefined;

/**
 * Loads testcontainers with its reaper (Ryuk) disabled: TESTCONTAINERS_RYUK_DISABLED=true is
 * set before the module is first imported, because the reaper image cannot be pulled where no
 * registry is reachable (shared/notes/machine.md). The docker runtime cleans up after itself
 * (close); the sweep of crashed runs goes through the docker command line. Loaded once per process.
 */
export function loadTestcontainers(): Promise<TestcontainersModule> {
  if (loading === undefined) {
    process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
    loading = import('testcontainers');
  }
  return loading;
}
