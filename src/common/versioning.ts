import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiHeader } from '@nestjs/swagger';
import { HttpRequest, setHeader } from '../http/platform';
import { AppError } from './errors';

export { assertVersion } from './errors';

/**
 * `If-Match: "<version>"` of a PATCH or action, as a number (undefined when absent).
 * A malformed value is 400; comparing it is `assertVersion`'s job.
 */
const readIfMatch = createParamDecorator((_: unknown, ctx: ExecutionContext): number | undefined => {
  const raw = ctx.switchToHttp().getRequest<HttpRequest>().headers['if-match'];
  if (raw === undefined || raw === '*') return undefined;
  const m = /^\s*(?:W\/)?"?(\d{1,9})"?\s*$/.exec(String(raw));
  if (!m) throw new AppError(400, 'validation_failed', 'If-Match must be a document version, e.g. "3"', [{ field: 'If-Match', message: 'must be "<version>"' }]);
  return Number(m[1]);
});


/** The `If-Match` header as documented on every PATCH and action of a versioned document (OpenAPI). */
export const IF_MATCH = { name: 'If-Match', required: false, description: 'expected version, e.g. "3" → 412 version_conflict if it moved on' };

/** Marks a route that takes If-Match (a versioned document): its OpenAPI operation lists 412. */
export const VERSIONED_KEY = 'versioned';

/**
 * `@IfMatch() ifMatch?: number` — the expected version from `If-Match` (optional; malformed → 400). It
 * documents the header on its route and marks the route versioned, so no route can take the header
 * without documenting it.
 */
export const IfMatch = (): ParameterDecorator => (target, key, index) => {
  readIfMatch()(target, key, index);
  const descriptor = Object.getOwnPropertyDescriptor(target, key!)!;
  ApiHeader(IF_MATCH)(target, key!, descriptor);
  SetMetadata(VERSIONED_KEY, true)(target, key!, descriptor);
};

/** Single-document responses (`{data: {version}}`) carry `ETag: "<version>"` (set by UnitOfWorkInterceptor). */
export function setETag(reply: object, body: unknown): void {
  const data = (body as { data?: { version?: unknown } } | undefined)?.data;
  if (typeof data?.version === 'number' && !Array.isArray(data)) setHeader(reply, 'ETag', `"${data.version}"`);
}
