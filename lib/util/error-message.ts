/**
 * The message of anything thrown: an Error's message, anything else as a string. Never throws
 * itself: host code may throw an object whose `toString` or `message` getter throws (or a
 * null-prototype object), and the one error path must still answer.
 */
export function errorMessage(thrown: unknown): string {
  try {
    const message = thrown instanceof Error ? thrown.message : thrown;
    return typeof message === 'string' ? message : String(message);
  } catch {
    return 'the thrown value could not be read';
  }
}
