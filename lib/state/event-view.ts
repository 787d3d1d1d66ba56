import { JsonSerializationError, stringifyAtOnce } from '../json-stream/index';
import { sharedProbe } from '../json-stream/probe';
import { cutText } from '../util/cut-text';
import { errorMessage } from '../util/error-message';
import type { ControllerEvent } from './types';

/*
 * One view of an event's `details` for every answer (the `events` and `state` variables, the
 * watch): details are the host's values, and one that cannot be served (a cycle such as an HTTP
 * client's error, a BigInt, a getter or toJSON() that throws) must cost only that event its
 * details, never the answer with the events around it, nor the watch.
 */

// How long checking one event's details may take at once; above it they are served as they are
// (plain data that large is written by the streaming serializer, which handles it).
const CHECK_BUDGET_MS = 1;
// Host text echoed into `details_error`.
const ERROR_ECHO = 256;
// Plain details up to this size are known servable from the probe alone, without writing them.
const PROBE_CHARS = 64 * 1024;

/** The event without its details, saying why they are not served. */
function withoutDetails(event: ControllerEvent, problem: string): ControllerEvent {
  const { details: _omitted, ...rest } = event;
  return { ...rest, details_error: problem };
}

function describe(err: unknown): string {
  return err instanceof JsonSerializationError
    ? cutText(err.message, ERROR_ECHO)
    : `details cannot be served: ${cutText(errorMessage(err), ERROR_ECHO)}`;
}

/**
 * `event` as answers serve it: unchanged when its details can be served (or are plain data too
 * large to check at once), otherwise without them and with `details_error` naming the path and
 * the problem. Plain details cost one probe walk; details with user code in them are written once
 * within a small budget to find out.
 */
export function servableEvent(event: ControllerEvent): ControllerEvent {
  const details = event.details;
  if (details === undefined) return event;
  if (typeof details === 'object' && details !== null && sharedProbe.measure(details, PROBE_CHARS) >= 0) return event;
  try {
    stringifyAtOnce(details, { budgetMs: CHECK_BUDGET_MS }, 'event details');
    return event;
  } catch (err) {
    return withoutDetails(event, describe(err));
  }
}

/**
 * The JSON text of `event` as a watch writes it, at most `maxChars` long: the same checks as
 * {@link servableEvent}, and details too large for a watch to hold are replaced too (the event
 * stays readable whole with `?since=`).
 */
export function eventJson(event: ControllerEvent, maxChars: number): string {
  let problem: string;
  try {
    const text = stringifyAtOnce(event, { budgetMs: 2, maxBytes: maxChars }, 'event watch');
    if (text !== undefined) return text;
    problem = `details are larger than a watch holds (${maxChars} bytes) or too costly to write at once; read the event with ?since=${event.seq - 1}&limit=1`;
  } catch (err) {
    problem = describe(err);
  }
  // What is left is strings and numbers the store checked on publish.
  return JSON.stringify(withoutDetails(event, problem));
}
