/** The message of anything thrown: an Error's message, anything else as a string. */
export function errorMessage(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown);
}
