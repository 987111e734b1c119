// Polling until an asynchronous condition holds, for tests that watch other processes.

/**
 * Calls `probe` every `intervalMs` until it returns something other than undefined (a
 * throw counts as "not yet") and returns that. After `timeoutMs` it fails naming `what`,
 * the probe's last error, and `detail()` when given (a child process's output, say).
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  intervalMs = 100,
  detail?: () => string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  const cause = lastError ? ` (last error: ${String(lastError)})` : '';
  throw new Error(`timed out waiting for ${what}${cause}${detail ? `; output:\n${detail()}` : ''}`);
}
