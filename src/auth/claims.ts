import { AppError } from '../common/errors';
import type { Principal } from '../tenancy/request-context';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// C0 and C1 control characters and DEL: a subject is written on every record it changes and in logs.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
export const MAX_SUBJECT_LENGTH = 255;

const unauthorized = (message: string) => new AppError(401, 'unauthorized', message);

/**
 * Turns verified claims into the principal (CONTRACT §3): `exp` required; `<ns>tenant_id` a UUID; `sub` a
 * non-empty string of at most 255 characters without control characters; `<ns>permissions` an array of
 * strings — when it is absent, the space-delimited `scope` is used; present but of another shape → 401
 * (never a silent fall-back to `scope`).
 */
export function principalFromClaims(claims: Record<string, unknown>, namespace: string): Principal {
  if (typeof claims.exp !== 'number') throw unauthorized('Token has no expiry (exp)');
  const tenantId = claims[`${namespace}tenant_id`];
  if (typeof tenantId !== 'string' || !UUID.test(tenantId)) throw unauthorized('Token has no valid tenant_id claim');
  const sub = claims.sub;
  if (typeof sub !== 'string' || !sub) throw unauthorized('Token has no subject (sub)');
  if (sub.length > MAX_SUBJECT_LENGTH || CONTROL.test(sub))
    throw unauthorized(`Token subject (sub) must be at most ${MAX_SUBJECT_LENGTH} characters without control characters`);
  const key = `${namespace}permissions`;
  let permissions: string[];
  if (key in claims) {
    const listed = claims[key];
    if (!Array.isArray(listed) || !listed.every((p) => typeof p === 'string')) throw unauthorized('Token permissions claim must be an array of strings');
    permissions = listed;
  } else {
    permissions = typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [];
  }
  return { tenantId: tenantId.toLowerCase(), userId: sub, permissions: new Set(permissions) };
}
