import type { NextFunction, Request, Response } from 'express';
import { randomUUID } from 'node:crypto';
import { AppError } from './errors';

/** A body on a write must be JSON: anything else is 400 bad_request rather than silently ignored. */
export function requireJsonBody(req: Request, _res: Response, next: NextFunction): void {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && ['POST', 'PATCH', 'PUT'].includes(req.method) && !req.is(['application/json', 'application/*+json'])) {
    return next(new AppError(400, 'bad_request', 'Request body must be JSON (Content-Type: application/json)'));
  }
  next();
}

/** Every response carries X-Request-Id: the caller's (if sane) or a new one. */
export function requestId(req: Request & { id?: string }, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  req.id = typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
  res.setHeader('X-Request-Id', req.id);
  next();
}
