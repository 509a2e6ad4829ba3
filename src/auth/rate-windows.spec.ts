import { RateWindows } from './rate-windows';

const MINUTE = 60_000;

describe('RateWindows (rate limiter counters)', () => {
  let now: number;
  let windows: RateWindows;
  beforeEach(() => {
    now = Date.UTC(2026, 10, 25, 8, 0, 0, 250);
    windows = new RateWindows(() => now);
  });

  it('lets `limit` requests of a key through per window, refuses the next ones without counting them, per key', () => {
    for (let i = 1; i <= 5; i++) expect(windows.hit('a', MINUTE, 5)).toMatchObject({ isBlocked: false, totalHits: i });
    expect(windows.hit('a', MINUTE, 5)).toMatchObject({ isBlocked: true, totalHits: 6 });
    expect(windows.hit('a', MINUTE, 5)).toMatchObject({ isBlocked: true, totalHits: 6 });
    expect(windows.hit('b', MINUTE, 5)).toMatchObject({ isBlocked: false, totalHits: 1 });
  });

  it('frees a slot when the oldest counted request leaves the window, and says when that is', () => {
    windows.hit('a', MINUTE, 3); // 08:00:00.250
    now += 20_000;
    windows.hit('a', MINUTE, 3); // 08:00:20.250
    windows.hit('a', MINUTE, 3);
    now += 10_000; // 08:00:30.250
    // The first request leaves the window at 08:01:00.000: in 29.75 s.
    expect(windows.hit('a', MINUTE, 3)).toMatchObject({ isBlocked: true, timeToBlockExpire: 30 });
    now += 29_700; // 08:00:59.950
    expect(windows.hit('a', MINUTE, 3)).toMatchObject({ isBlocked: true, timeToBlockExpire: 1 });
    now += 100; // 08:01:00.050
    expect(windows.hit('a', MINUTE, 3)).toMatchObject({ isBlocked: false, totalHits: 3 });
    expect(windows.hit('a', MINUTE, 3)).toMatchObject({ isBlocked: true });
    // Long after: everything has left the window.
    now += 5 * MINUTE;
    expect(windows.hit('a', MINUTE, 3)).toMatchObject({ isBlocked: false, totalHits: 1 });
  });

  it('costs the same whatever the limit: 300,000 requests in one window of a limit of a million', () => {
    for (let i = 0; i < 300_000; i++) {
      if (i % 1000 === 0) now += 10;
      windows.hit('busy', MINUTE, 1_000_000);
    }
    expect(windows.hit('busy', MINUTE, 1_000_000)).toMatchObject({ isBlocked: false, totalHits: 300_001 });
    // what it keeps for the key: one counter per second of the window, not one entry per request
    const kept = (windows as unknown as { windows: Map<string, { counts: Uint32Array }> }).windows.get('busy')!;
    expect(kept.counts).toHaveLength(60);
  });

  it('drops keys idle for a whole window', () => {
    windows.hit('a', MINUTE, 5);
    windows.hit('b', MINUTE, 5);
    now += 30_000;
    windows.hit('b', MINUTE, 5);
    now += 31_000;
    windows.sweep();
    expect(windows.size).toBe(1);
    now += MINUTE;
    windows.sweep();
    expect(windows.size).toBe(0);
  });
});
