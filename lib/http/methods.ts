import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { cutText } from '../util/cut-text';
import { HttpError } from './errors';

/**
 * Answers every method but GET and HEAD with `405` and an `Allow` header. Mount it before the
 * routes of a read-only surface so that a POST never reaches a handler. With `owns`, only the
 * paths it accepts are ours: every other request passes on untouched, to the host's own routes.
 */
export function readOnly(owns?: (path: string) => boolean): RequestHandler {
  return function rejectWriteMethods(req: Request, _res: Response, next: NextFunction): void {
    if (req.method === 'GET' || req.method === 'HEAD' || (owns !== undefined && !owns(req.path))) {
      next();
      return;
    }
    const where = cutText(`${req.baseUrl}${req.path}`, 128);
    next(
      new HttpError(405, `method ${req.method} not allowed on ${where}; this endpoint is read-only (use GET or HEAD)`, {
        Allow: 'GET, HEAD',
      }),
    );
  };
}
