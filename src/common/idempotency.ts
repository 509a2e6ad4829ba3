import { createHash } from 'node:crypto';

/** The request header (CONTRACT.md §1) and its accepted length. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;
/** Keys are kept this long; an older row is treated as absent. */
export const IDEMPOTENCY_TTL_HOURS = 24;

export const IDEMPOTENCY_DESCRIPTION =
  `Optional, 1..${IDEMPOTENCY_KEY_MAX_LENGTH} characters, per tenant, kept ${IDEMPOTENCY_TTL_HOURS} h. ` +
  'The first request with a key stores its response: a success in the same transaction as its effect, ' +
  'a client error (4xx except 429 and 409 `idempotency_conflict`) once its transaction has rolled back. ' +
  'A repeat with the same method, path (with query) and body returns that stored status and body, byte for byte ' +
  '(but a field shown once, a new webhook\'s `secret`, which is never stored), ' +
  'without executing again (header `Idempotent-Replayed: true`); the same key with a different request is 409 `idempotency_conflict`. ' +
  'Server errors (5xx) are not stored: retrying with the key executes the request again.';

/**
 * Fields of a route's answer (`data.<field>`) that are shown once and so never stored under an
 * Idempotency-Key: a repeat replays the stored answer without them (a webhook's `secret`, CONTRACT §9:
 * "once, never again"; the key is the tenant's, not the caller's, and the store is not encrypted): the
 * route's `@ShownOnce(...)` (idempotency.interceptor.ts).
 */
export const SHOWN_ONCE = 'idempotency.shownOnce';

/** The answer as stored under its key: without the route's shown-once fields. */
export function storedAnswer(body: unknown, shownOnce: readonly string[] | undefined): string {
  const data = (body as { data?: unknown } | null | undefined)?.data;
  if (!shownOnce?.length || data === null || typeof data !== 'object' || Array.isArray(data)) return JSON.stringify(body ?? null);
  const kept = { ...(data as Record<string, unknown>) };
  for (const f of shownOnce) delete kept[f];
  return JSON.stringify({ ...(body as object), data: kept });
}

/**
 * Whether a failed first request's error response is stored under its key (replayed on repeats): client
 * errors that result from executing the request. Not stored: 429 (the request was not executed),
 * 409 `idempotency_conflict` (about the key, not the request) and 5xx (transient; a retry must execute).
 */
export function shouldStoreFailure(status: number, code: string): boolean {
  return status >= 400 && status < 500 && status !== 429 && code !== 'idempotency_conflict';
}

/** JSON with object keys sorted, so the same body hashes the same whatever order its fields were sent in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** What identifies "the same request" for a key: method, path (with query) and body. */
export function requestHash(method: string, url: string, body: unknown): string {
  return createHash('sha256').update(`${method.toUpperCase()} ${url}\n${canonicalJson(body)}`).digest('hex');
}

/** Documents the header on every POST operation of an OpenAPI document. */
export function documentIdempotencyKey<T extends { paths: Record<string, { post?: { parameters?: unknown[] } }> }>(doc: T): T {
  for (const { post } of Object.values(doc.paths)) {
    if (!post) continue;
    post.parameters = [
      ...(post.parameters ?? []),
      {
        name: IDEMPOTENCY_HEADER,
        in: 'header',
        required: false,
        description: IDEMPOTENCY_DESCRIPTION,
        schema: { type: 'string', minLength: 1, maxLength: IDEMPOTENCY_KEY_MAX_LENGTH },
      },
    ];
  }
  return doc;
}
