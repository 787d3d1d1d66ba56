import { cutText } from '../util/cut-text';
import { errorMessage } from '../util/error-message';

// A Status is a few hundred bytes; a larger error body is shown as text rather than parsed.
const MAX_PARSED_BODY = 16_384;

/**
 * One line, at most `max` characters, from what a Kubernetes API call failed with. client-node's
 * API errors (`ApiException`) carry the status code and the API server's answer, but their message
 * spans four lines and ends with every response header: the code and the Status message say it in
 * one (`HTTP 409: Operation cannot be fulfilled …`). Anything else is its message. Never throws.
 */
export function apiErrorReason(err: unknown, max: number): string {
  let text: string;
  try {
    const { code, statusCode, body } = (typeof err === 'object' && err !== null ? err : {}) as Record<string, unknown>;
    const status = typeof code === 'number' ? code : statusCode;
    const said = statusMessage(body);
    text = typeof status === 'number' ? `HTTP ${status}${said === undefined || said === '' ? '' : `: ${said}`}` : errorMessage(err);
  } catch {
    text = errorMessage(err);
  }
  // Cut before collapsing, so a megabyte body costs no more than its head.
  return cutText(
    cutText(text, max * 2)
      .replace(/\s+/g, ' ')
      .trim(),
    max,
  );
}

/**
 * The API server's own words in an error body: a Status object's message (client-node hands the
 * body over as text or parsed), or the text itself when it is no Status.
 */
function statusMessage(body: unknown): string | undefined {
  if (typeof body === 'string') {
    if (body.length > MAX_PARSED_BODY || !body.startsWith('{')) return body;
    try {
      return statusMessage(JSON.parse(body)) ?? body;
    } catch {
      return body;
    }
  }
  const message = (body as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
}
