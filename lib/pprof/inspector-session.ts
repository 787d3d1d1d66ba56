import { errorMessage } from '../util/error-message';
import type { Session } from 'node:inspector/promises';

/** What {@link loadInspector} found. */
export type InspectorAvailability = { available: true } | { available: false; reason: string };

let inspectorModule: typeof import('node:inspector/promises') | undefined;
let inspectorError: string | undefined;

/**
 * Loads `node:inspector/promises` once. Node builds configured `--without-inspector` throw on
 * require; that must become a clear message, not a crash at import time.
 */
export function loadInspector(): InspectorAvailability {
  if (inspectorModule) return { available: true };
  if (inspectorError !== undefined) return { available: false, reason: inspectorError };
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a Node.js built without the inspector has no such module: loaded on demand
    inspectorModule = require('node:inspector/promises') as typeof import('node:inspector/promises');
    return { available: true };
  } catch (err) {
    inspectorError = errorMessage(err);
    return { available: false, reason: inspectorError };
  }
}

/**
 * Opens an in-process inspector session. Sessions are independent: disconnecting one disables
 * only the domains it enabled, which is how every profile we start is guaranteed to stop.
 */
export function openSession(): Session {
  const availability = loadInspector();
  if (!availability.available || !inspectorModule) {
    throw new Error(
      `node:inspector is not available in this Node.js build: ${availability.available ? 'unknown reason' : availability.reason}`,
    );
  }
  const session = new inspectorModule.Session();
  session.connect();
  return session;
}
