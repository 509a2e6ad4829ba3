import type { AttemptOutcome } from './webhooks.sql';
import { MAX_RESPONSE_BYTES, type SendResult } from './delivery';

/**
 * Seconds from a failed attempt to the next, by attempt: the first retry within 10 s, then backing off to a
 * day — 11 attempts over about 45.7 hours (CONTRACT §9: at least 8 over at least 24 h). Multiplied by
 * WEBHOOK_BACKOFF_SCALE (1 but in tests).
 */
export const BACKOFF_SECONDS = [5, 30, 120, 600, 1800, 3600, 7200, 21_600, 43_200, 86_400] as const;
export const MAX_ATTEMPTS = BACKOFF_SECONDS.length + 1;
/** The longest a `Retry-After` may put the next attempt off. */
export const MAX_RETRY_AFTER_SECONDS = 86_400;

/** A `Retry-After` header as seconds from `now` (delta-seconds or an HTTP date), bounded to 0..MAX_RETRY_AFTER_SECONDS (a longer wait is capped to it); undefined when absent or malformed. */
export function retryAfterSeconds(header: string | null, now: Date): number | undefined {
  if (!header) return undefined;
  const text = header.trim();
  let seconds: number;
  // Delta-seconds of any length (a huge one is put off by the cap, like a 10-digit one).
  if (/^\d+$/.test(text)) seconds = Number(text);
  else {
    const at = Date.parse(text);
    if (!/[a-z]/i.test(text) || Number.isNaN(at)) return undefined;
    seconds = (at - now.getTime()) / 1000;
  }
  return Math.min(Math.max(0, seconds), MAX_RETRY_AFTER_SECONDS);
}

/** A byte-bounded text a PostgreSQL text column takes (no NUL), cut at a character boundary. */
export function boundedText(text: string, maxBytes: number): string {
  let s = text.replace(/\u0000/g, '');
  while (Buffer.byteLength(s) > maxBytes) s = s.slice(0, Math.max(0, s.length - Math.ceil((Buffer.byteLength(s) - maxBytes) / 3)));
  return s;
}

/**
 * What an attempt's answer means: a 2xx is delivered; a 410 Gone fails it for good and turns the webhook
 * off; anything else (another status, no answer, a refused target) is retried after the schedule's delay or
 * the answer's `Retry-After`, whichever is later, while attempts remain.
 */
export function outcomeOf(attempt: number, r: SendResult, attemptedAt: Date, scale: number, answeredAt = new Date()): AttemptOutcome {
  const delivered = r.status !== null && r.status >= 200 && r.status < 300;
  const gone = r.status === 410;
  let nextAttemptAt: Date | null = null;
  if (!delivered && !gone && attempt < MAX_ATTEMPTS) {
    const backoff = BACKOFF_SECONDS[attempt - 1] * scale;
    const wait = Math.max(backoff, retryAfterSeconds(r.retryAfter, attemptedAt) ?? 0);
    nextAttemptAt = new Date(answeredAt.getTime() + wait * 1000);
  }
  return {
    status: delivered ? 'delivered' : 'failed',
    responseStatus: r.status,
    responseBody: r.body === null ? null : boundedText(r.body, MAX_RESPONSE_BYTES),
    error: r.error !== null ? boundedText(r.error, 500) : delivered ? null : gone ? 'answered 410 Gone: the webhook was turned off' : `answered ${r.status}`,
    attemptedAt,
    nextAttemptAt,
    gone,
  };
}
