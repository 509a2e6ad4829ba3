import { CallHandler, createParamDecorator, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { map, Observable } from 'rxjs';
import { AppError } from './errors';

export { assertVersion } from './errors';

/**
 * `If-Match: "<version>"` of a PATCH or action, as a number (undefined when absent).
 * A malformed value is 400; comparing it is `assertVersion`'s job.
 */
export const IfMatch = createParamDecorator((_: unknown, ctx: ExecutionContext): number | undefined => {
  const raw = ctx.switchToHttp().getRequest<Request>().headers['if-match'];
  if (raw === undefined || raw === '*') return undefined;
  const m = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(String(raw));
  if (!m) throw new AppError(400, 'validation_failed', 'If-Match must be a document version, e.g. "3"', [{ field: 'If-Match', message: 'must be "<version>"' }]);
  return Number(m[1]);
});


/** The `If-Match` header as documented on every PATCH and action of a versioned document (OpenAPI). */
export const IF_MATCH = { name: 'If-Match', required: false, description: 'expected version, e.g. "3" → 412 version_conflict if it moved on' };

/** Single-document responses (`{data: {version}}`) carry `ETag: "<version>"`. */
@Injectable()
export class ETagInterceptor implements NestInterceptor {
  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((body) => {
        const version = (body as { data?: { version?: unknown } } | undefined)?.data?.version;
        if (typeof version === 'number' && !Array.isArray((body as { data: unknown }).data)) {
          ctx.switchToHttp().getResponse<Response>().setHeader('ETag', `"${version}"`);
        }
        return body;
      }),
    );
  }
}
