/**
 * Runs a synchronous body behind a Promise-returning interface (an agent session method, an action
 * handler) so a throw arrives as a rejection, as the interface promises: some callers only attach
 * `.catch` (LiveSession.refuse), and an `async` body with nothing to await would trip require-await.
 */
export function settled<T>(body: () => T): Promise<T> {
  try {
    return Promise.resolve(body());
  } catch (error) {
    return Promise.reject(error as Error);
  }
}
