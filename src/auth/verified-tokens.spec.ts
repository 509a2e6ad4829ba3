import { VerifiedTokens } from './verified-tokens';

describe('VerifiedTokens', () => {
  let clock = 1_000_000;
  const now = () => clock;

  it('serves a token until its exp, or ttl after verification, whichever is first', () => {
    const cache = new VerifiedTokens<string>(60_000, 10, now);
    cache.set('short', 'p1', (clock + 5_000) / 1000); // exp in 5 s
    cache.set('long', 'p2', (clock + 3_600_000) / 1000); // exp in an hour
    expect(cache.get('short')).toBe('p1');
    expect(cache.get('long')).toBe('p2');
    clock += 5_000;
    expect(cache.get('short')).toBeUndefined(); // expired: must be verified again (and refused)
    expect(cache.get('long')).toBe('p2');
    clock += 55_000;
    expect(cache.get('long')).toBeUndefined(); // ttl passed: verified again against the current keys
    expect(cache.get('unknown')).toBeUndefined();
  });

  it('never stores a token already expired, and keeps at most maxEntries (oldest out first)', () => {
    const cache = new VerifiedTokens<number>(60_000, 3, now);
    cache.set('expired', 0, (clock - 1) / 1000);
    expect(cache.get('expired')).toBeUndefined();
    for (let i = 1; i <= 4; i++) cache.set(`t${i}`, i, (clock + 60_000) / 1000);
    expect(cache.size).toBe(3);
    expect(cache.get('t1')).toBeUndefined();
    expect([cache.get('t2'), cache.get('t3'), cache.get('t4')]).toEqual([2, 3, 4]);
  });
});
