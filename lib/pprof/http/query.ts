import type { Request } from 'express';
import { HttpError } from '../../http/errors';
import { queryHas, queryInteger, queryString } from '../../http/query';
import type { ProfileName } from '../catalog';

/** The validated query of a profile request. */
export interface ProfileQuery {
  /** 0 = binary/JSON form, 1 = text, 2 = text with all detail. */
  debug: 0 | 1 | 2;
  /** Run a full GC before reading the heap. */
  gc: boolean;
  /** The requested representation; the endpoint's default when absent. */
  format: string;
  /** Whether `format` was given explicitly. */
  formatGiven: boolean;
  /** CPU profile length (only `/profile`). */
  seconds: number;
  /** `/heap?seconds=N`: a delta profile over N seconds instead of a snapshot. */
  deltaSeconds: number | undefined;
}

// Endpoints that have a text form; /profile takes and ignores `debug`, as Go's does.
const TEXT_FORMS: ReadonlySet<ProfileName> = new Set(['heap', 'allocs', 'goroutine', 'block', 'mutex']);

/**
 * Validates the query once per request so handlers only see good values. Anything malformed is a
 * `400` that names the parameter and the accepted values.
 */
export function parseProfileQuery(
  req: Request,
  name: ProfileName,
  formats: readonly string[],
  limits: { defaultSeconds: number; maxSeconds: number },
): ProfileQuery {
  const debug = (queryInteger(req, 'debug', { min: 0, max: 2 }) ?? 0) as 0 | 1 | 2;
  const gc = (queryInteger(req, 'gc', { min: 0, max: 1 }) ?? 0) === 1;
  const formatText = queryString(req, 'format');
  if (formatText !== undefined && !formats.includes(formatText)) {
    throw new HttpError(
      400,
      `query parameter "format" must be one of ${formats.join(', ')} for /${name}, got ${JSON.stringify(formatText.slice(0, 32))}`,
    );
  }
  if (formatText !== undefined && debug > 0 && TEXT_FORMS.has(name)) {
    throw new HttpError(
      400,
      `query parameters "debug" and "format" are alternatives for /${name}: debug=1 or 2 selects the text form, format selects another one`,
    );
  }
  let seconds = limits.defaultSeconds;
  let deltaSeconds: number | undefined;
  if (name === 'profile') {
    seconds = queryInteger(req, 'seconds', { min: 1, max: limits.maxSeconds }) ?? limits.defaultSeconds;
  } else if (name === 'trace') {
    // Go's trace defaults to one second: a trace grows fast.
    seconds = queryInteger(req, 'seconds', { min: 1, max: limits.maxSeconds }) ?? 1;
  } else if ((name === 'heap' || name === 'allocs') && queryHas(req, 'seconds')) {
    deltaSeconds = queryInteger(req, 'seconds', { min: 1, max: limits.maxSeconds });
    if (formatText !== undefined && formatText !== 'pprof') {
      throw new HttpError(
        400,
        `a delta ${name} profile (?seconds=) is served as pprof or debug=1 text; ${formatText} cannot hold a difference of two profiles`,
      );
    }
  } else if (queryHas(req, 'seconds')) {
    throw new HttpError(
      400,
      `query parameter "seconds" applies only to /profile, /trace, /heap and /allocs (a delta profile); /${name} is a snapshot`,
    );
  }
  return { debug, gc, format: formatText ?? formats[0], formatGiven: formatText !== undefined, seconds, deltaSeconds };
}
