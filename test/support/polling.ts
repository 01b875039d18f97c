// Waiting for something that happens by itself a little later: one polling loop for every suite.

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export interface PollOptions {
  /** How long to keep asking; default 30 s. */
  timeoutMs?: number;
  /** The pause between two questions; default 200 ms. */
  intervalMs?: number;
}

/**
 * Asks `probe` until `accept` holds for its answer or `timeoutMs` passed, and returns the last
 * answer either way: the caller asserts on it, so a failure shows the value that was seen.
 */
export async function pollUntil<T>(
  probe: () => Promise<T> | T,
  accept: (value: T) => boolean,
  { timeoutMs = 30_000, intervalMs = 200 }: PollOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await probe();
  while (!accept(value) && Date.now() < deadline) {
    await sleep(intervalMs);
    value = await probe();
  }
  return value;
}

export interface EventuallyOptions extends PollOptions {
  /** A probe that throws counts as "not yet" (a service restarting) instead of failing the wait. */
  ignoreErrors?: boolean;
  /** Appended to the timeout's error, e.g. the services' output. */
  detail?: () => string;
}

/** Asks `probe` until it returns a value other than undefined; throws naming `what` after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
  options: EventuallyOptions = {},
): Promise<T> {
  const { timeoutMs = 30_000, ignoreErrors = false, detail } = options;
  const ask = ignoreErrors
    ? async () => {
        try {
          return await probe();
        } catch {
          return undefined;
        }
      }
    : probe;
  const value = await pollUntil(ask, (answer) => answer !== undefined, options);
  if (value !== undefined) return value;
  throw new Error(`${what} did not happen within ${timeoutMs} ms${detail ? `\n${detail()}` : ''}`);
}

/** Asks `check` until it holds; throws naming `what` after `timeoutMs`. */
export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  what: string,
  options: EventuallyOptions = {},
): Promise<void> {
  await eventually(async () => ((await check()) ? true : undefined), what, options);
}
