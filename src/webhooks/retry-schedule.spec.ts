import { MAX_RETRY_AFTER_SECONDS, outcomeOf, retryAfterSeconds } from './retry-schedule';

describe('Retry-After', () => {
  const now = new Date('2026-11-28T12:00:00Z');

  it('reads delta-seconds and HTTP dates, never below 0', () => {
    expect(retryAfterSeconds('7', now)).toBe(7);
    expect(retryAfterSeconds(' 120 ', now)).toBe(120);
    expect(retryAfterSeconds('Sat, 28 Nov 2026 12:01:30 GMT', now)).toBe(90);
    expect(retryAfterSeconds('Sat, 28 Nov 2026 11:00:00 GMT', now)).toBe(0);
  });

  it('caps a longer wait at a day, however many digits it has', () => {
    expect(retryAfterSeconds('9999999999', now)).toBe(MAX_RETRY_AFTER_SECONDS);
    expect(retryAfterSeconds('99999999999', now)).toBe(MAX_RETRY_AFTER_SECONDS);
    expect(retryAfterSeconds('9'.repeat(400), now)).toBe(MAX_RETRY_AFTER_SECONDS);
    expect(retryAfterSeconds('Fri, 01 Jan 2100 00:00:00 GMT', now)).toBe(MAX_RETRY_AFTER_SECONDS);
  });

  it('ignores what is neither (the schedule decides)', () => {
    for (const bad of [null, '', '-5', '1.5', 'soon', '12abc', '1e3'] as const) expect(retryAfterSeconds(bad, now)).toBeUndefined();
  });

  it('puts the next attempt off by the later of the schedule and Retry-After', () => {
    const failed = (retryAfter: string | null) => outcomeOf(1, { status: 503, body: '', retryAfter, error: null }, now, 1, now);
    expect(failed(null).nextAttemptAt).toEqual(new Date(now.getTime() + 5_000));
    expect(failed('1').nextAttemptAt).toEqual(new Date(now.getTime() + 5_000));
    expect(failed('60').nextAttemptAt).toEqual(new Date(now.getTime() + 60_000));
    expect(failed('123456789012').nextAttemptAt).toEqual(new Date(now.getTime() + MAX_RETRY_AFTER_SECONDS * 1000));
  });
});
