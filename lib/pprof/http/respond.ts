import type { Request, Response } from 'express';
import type { Profile } from 'pprof-format';
import { setNoStoreHeaders } from '../../http/headers';
import { sendWhole } from '../../http/send-text';
import { encodePprof } from '../pprof-encoder';

/** Content types of the pprof answers. */
export const TEXT = 'text/plain; charset=utf-8';
export const JSON_TYPE = 'application/json; charset=utf-8';

/** Answers a whole body (empty for HEAD, with the length a GET would have). */
export function sendBody(req: Request, res: Response, contentType: string, body: string | Buffer, fileName?: string): void {
  sendWhole(req, res, 200, contentType, body, fileName ? { 'Content-Disposition': `attachment; filename="${fileName}"` } : {});
}

/** HEAD of an expensive representation: its headers, without producing it (length unknown). */
export function sendHeadOnly(res: Response, contentType: string, fileName?: string): void {
  setNoStoreHeaders(res);
  res.status(200);
  res.setHeader('Content-Type', contentType);
  if (fileName) res.setHeader('Content-Disposition', `attachment; filename="${fileName}"`);
  res.end();
}

/** Answers a profile as gzipped protobuf, `<name>.pb.gz`; `signal` (the client gone) stops the encoding. */
export async function sendPprof(req: Request, res: Response, name: string, profile: Profile, signal?: AbortSignal): Promise<void> {
  const body = await encodePprof(profile, signal);
  if (res.destroyed) return;
  sendBody(req, res, 'application/octet-stream', body, `${name}.pb.gz`);
}
