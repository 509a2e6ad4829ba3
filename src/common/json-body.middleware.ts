import type { NextFunction, Request, Response } from 'express';
import { AppError } from './errors';

/** A body on a write must be JSON: anything else is 400 bad_request rather than silently ignored. */
export function requireJsonBody(req: Request, _res: Response, next: NextFunction): void {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && ['POST', 'PATCH', 'PUT'].includes(req.method) && !req.is(['application/json', 'application/*+json'])) {
    return next(new AppError(400, 'bad_request', 'Request body must be JSON (Content-Type: application/json)'));
  }
  next();
}
