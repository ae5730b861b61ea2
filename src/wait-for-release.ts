/**
 * A service started again while its predecessor is still stopping (a graceful stop drains the
 * queues first) finds what that one holds still taken: embedded ClickHouse's directory, the
 * port. It waits this long for them to be released rather than exit.
 */
export const RELEASE_WAIT_MS = 30_000;
const RETRY_MS = 500;

/**
 * Runs `attempt` until it succeeds, trying again every 500 ms while `held(err)` says another
 * process still holds what it needs, for up to RELEASE_WAIT_MS; then the last error is thrown.
 * `onHeld` is called once, when the first attempt finds it held.
 */
export async function waitForRelease<T>(attempt: () => Promise<T> | T, opts: { held(err: unknown): boolean; onHeld(): void }): Promise<T> {
  const deadline = Date.now() + RELEASE_WAIT_MS;
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (err) {
      if (!opts.held(err) || Date.now() >= deadline) throw err;
      if (tries === 0) opts.onHeld();
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}
