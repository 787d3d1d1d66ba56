import { HttpError } from '../http/errors';
import { JsonPathError, type JsonPathErrorKind } from '../jsonpath';
import { UnknownVariableError } from '../state/types';

/** The status each kind of JSONPath failure answers with. */
const JSONPATH_STATUS: Readonly<Record<JsonPathErrorKind, 400 | 404 | 413>> = {
  parse: 400,
  type: 400,
  depth: 400,
  'not-found': 404,
  limit: 413,
};

/** The HTTP status of a {@link JsonPathError} kind: 400, 404 (not found) or 413 (over a limit). */
export function jsonPathStatus(kind: JsonPathErrorKind): 400 | 404 | 413 {
  return JSONPATH_STATUS[kind];
}

/** The introspection router's statuses for the errors of the engines and the state it reads. */
export function introspectionStatuses(err: unknown): HttpError | undefined {
  if (err instanceof JsonPathError) return new HttpError(jsonPathStatus(err.kind), err.message);
  if (err instanceof UnknownVariableError) return new HttpError(404, err.message);
  return undefined;
}
