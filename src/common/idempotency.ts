import { createHash } from 'node:crypto';

/** The request header (CONTRACT.md §1) and its accepted length. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;
/** Keys are kept this long; an older row is treated as absent. */
export const IDEMPOTENCY_TTL_HOURS = 24;

export const IDEMPOTENCY_DESCRIPTION =
  `Optional, 1..${IDEMPOTENCY_KEY_MAX_LENGTH} characters, per tenant, kept ${IDEMPOTENCY_TTL_HOURS} h. ` +
  'The first successful request with a key stores its response in the same transaction as its effect; ' +
  'a repeat with the same method, path (with query) and body returns that stored status and body without executing again ' +
  '(header `Idempotent-Replayed: true`); the same key with a different request is 409 `idempotency_conflict`. ' +
  'A request that fails is rolled back with its key, so retrying it executes it again.';

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
