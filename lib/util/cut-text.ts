/**
 * `text` cut to at most `max` characters, marked with `…` where it was cut: the one way host- or
 * client-provided text is shortened before it is echoed into an answer, so an error message or
 * a name can never make a body as large as its sender wants. Never splits a surrogate pair.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/**
 * The most of a thrown message (a variable provider's, a `toJSON()`'s) an error answer echoes: a
 * readable head that keeps this package's own diagnoses whole (a JSONPath cut to 400 characters
 * and the reason), never the megabytes a host's message may carry.
 */
export const MAX_ECHOED_MESSAGE = 1024;

/**
 * `text` cut to at most `max` characters (see {@link cutText}) and quoted as a JSON string: the one
 * way a name or value that a client or host gave is echoed into a message, so that quotes, line
 * breaks and control characters in it can neither end the quotation early nor forge a line.
 */
export function quoteText(text: string, max: number): string {
  return JSON.stringify(cutText(text, max));
}
