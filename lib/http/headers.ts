import type { Response } from 'express';

/**
 * The headers every answer of this package carries: debug and metrics bodies describe the live
 * process, so no cache may keep them, and browsers must not sniff a JSON or text body into HTML.
 */
export function setNoStoreHeaders(res: Response): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Content-Type-Options', 'nosniff');
}
