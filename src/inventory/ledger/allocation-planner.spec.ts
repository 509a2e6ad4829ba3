import Decimal from 'decimal.js';
import { FreeStock, fefoOrder, planAllocation, takeInOrder } from './allocation-planner';

const stock = (over: Partial<FreeStock> & { balanceId: string }): FreeStock => ({
  locationId: 'loc-1',
  locationCode: 'A-01',
  lotId: null,
  expiryDate: null,
  lotCreatedAt: null,
  free: 0,
  ...over,
});

const ordered = (xs: FreeStock[]) => [...xs].sort(fefoOrder).map((x) => x.balanceId);
/** Takes as [id, qty text] pairs. */
const takesOf = <T>(plan: { takes: Array<{ from: T; qty: Decimal }> }, id: (t: T) => string) =>
  plan.takes.map((t) => [id(t.from), t.qty.toFixed()]);

describe('fefoOrder', () => {
  it('puts the earliest expiry first', () => {
    const a = stock({ balanceId: 'a', expiryDate: '2030-06-01' });
    const b = stock({ balanceId: 'b', expiryDate: '2030-01-15' });
    const c = stock({ balanceId: 'c', expiryDate: '2029-12-31' });
    expect(ordered([a, b, c])).toEqual(['c', 'b', 'a']);
    expect(fefoOrder(c, a)).toBeLessThan(0);
    expect(fefoOrder(a, c)).toBeGreaterThan(0);
  });

  it('puts stock without an expiry date last', () => {
    const none = stock({ balanceId: 'none', expiryDate: null, locationCode: 'A-00' });
    const late = stock({ balanceId: 'late', expiryDate: '2099-12-31', locationCode: 'Z-99' });
    expect(ordered([none, late])).toEqual(['late', 'none']);
    expect(ordered([late, none])).toEqual(['late', 'none']);
    expect(fefoOrder(none, late)).toBeGreaterThan(0);
    expect(fefoOrder(late, none)).toBeLessThan(0);
  });

  it('expiry decides before the lot age, the location and the balance id', () => {
    const older = stock({ balanceId: 'a', expiryDate: '2031-01-01', lotCreatedAt: new Date('2020-01-01T00:00:00Z'), locationCode: 'A-01' });
    const sooner = stock({ balanceId: 'z', expiryDate: '2030-01-01', lotCreatedAt: new Date('2025-01-01T00:00:00Z'), locationCode: 'Z-99' });
    expect(ordered([older, sooner])).toEqual(['z', 'a']);
  });

  it('among equal expiries puts the older lot first', () => {
    const newer = stock({ balanceId: 'a', expiryDate: '2030-01-01', lotCreatedAt: new Date('2024-05-02T10:00:00Z'), locationCode: 'A-01' });
    const older = stock({ balanceId: 'z', expiryDate: '2030-01-01', lotCreatedAt: new Date('2024-05-02T09:59:59Z'), locationCode: 'Z-99' });
    expect(ordered([newer, older])).toEqual(['z', 'a']);
    expect(fefoOrder(older, newer)).toBeLessThan(0);
    expect(fefoOrder(newer, older)).toBeGreaterThan(0);
  });

  it('among stock without expiry also puts the older lot first', () => {
    const newer = stock({ balanceId: 'a', lotCreatedAt: new Date('2024-02-01T00:00:00Z'), locationCode: 'A-01' });
    const older = stock({ balanceId: 'b', lotCreatedAt: new Date('2024-01-01T00:00:00Z'), locationCode: 'B-01' });
    expect(ordered([newer, older])).toEqual(['b', 'a']);
  });

  it('puts a lot with a creation date before one without (equal expiry)', () => {
    const undated = stock({ balanceId: 'a', expiryDate: '2030-01-01', lotCreatedAt: null, locationCode: 'A-01' });
    const dated = stock({ balanceId: 'b', expiryDate: '2030-01-01', lotCreatedAt: new Date('2024-01-01T00:00:00Z'), locationCode: 'B-01' });
    expect(ordered([undated, dated])).toEqual(['b', 'a']);
    expect(fefoOrder(undated, dated)).toBeGreaterThan(0);
    expect(fefoOrder(dated, undated)).toBeLessThan(0);
  });

  it('compares creation dates by time, not by identity: equal times fall through to the location code', () => {
    const a = stock({ balanceId: 'a', expiryDate: '2030-01-01', lotCreatedAt: new Date('2024-01-01T00:00:00Z'), locationCode: 'B-01' });
    const b = stock({ balanceId: 'b', expiryDate: '2030-01-01', lotCreatedAt: new Date('2024-01-01T00:00:00Z'), locationCode: 'A-01' });
    expect(ordered([a, b])).toEqual(['b', 'a']);
  });

  it('when neither lot has a creation date, orders by location code (no NaN comparison)', () => {
    const a = stock({ balanceId: 'a', expiryDate: '2030-01-01', lotCreatedAt: null, locationCode: 'C-01' });
    const b = stock({ balanceId: 'b', expiryDate: '2030-01-01', lotCreatedAt: null, locationCode: 'A-01' });
    const c = stock({ balanceId: 'c', expiryDate: '2030-01-01', lotCreatedAt: null, locationCode: 'B-01' });
    expect(ordered([a, b, c])).toEqual(['b', 'c', 'a']);
    expect(ordered([c, a, b])).toEqual(['b', 'c', 'a']);
    expect(fefoOrder(b, a)).toBeLessThan(0);
    expect(fefoOrder(a, b)).toBeGreaterThan(0);
    expect(Number.isNaN(fefoOrder(a, b))).toBe(false);
  });

  it('when neither lot has a creation date and there is no expiry either, orders by location code then balance id', () => {
    const a = stock({ balanceId: 'b-2', locationCode: 'A-01' });
    const b = stock({ balanceId: 'b-1', locationCode: 'A-01' });
    const c = stock({ balanceId: 'b-0', locationCode: 'B-01' });
    expect(ordered([c, a, b])).toEqual(['b-1', 'b-2', 'b-0']);
  });

  it('then the location code', () => {
    const a = stock({ balanceId: 'a', expiryDate: '2030-01-01', lotCreatedAt: new Date('2024-01-01T00:00:00Z'), locationCode: 'B-02' });
    const b = stock({ balanceId: 'b', expiryDate: '2030-01-01', lotCreatedAt: new Date('2024-01-01T00:00:00Z'), locationCode: 'B-01' });
    expect(fefoOrder(b, a)).toBeLessThan(0);
    expect(fefoOrder(a, b)).toBeGreaterThan(0);
  });

  it('then the balance id; 0 only for the same balance', () => {
    const a = stock({ balanceId: '0002', locationCode: 'A-01' });
    const b = stock({ balanceId: '0001', locationCode: 'A-01' });
    expect(fefoOrder(b, a)).toBeLessThan(0);
    expect(fefoOrder(a, b)).toBeGreaterThan(0);
    expect(fefoOrder(a, { ...a })).toBe(0);
  });

  it('is a consistent comparator: sorting any permutation gives the same order', () => {
    const xs = [
      stock({ balanceId: 'e', expiryDate: null, lotCreatedAt: null, locationCode: 'A-01' }),
      stock({ balanceId: 'd', expiryDate: null, lotCreatedAt: new Date('2024-01-01T00:00:00Z'), locationCode: 'Z-01' }),
      stock({ balanceId: 'c', expiryDate: '2030-01-01', lotCreatedAt: null, locationCode: 'A-01' }),
      stock({ balanceId: 'b', expiryDate: '2030-01-01', lotCreatedAt: null, locationCode: 'A-00' }),
      stock({ balanceId: 'a', expiryDate: '2030-01-01', lotCreatedAt: new Date('2024-03-01T00:00:00Z'), locationCode: 'Z-99' }),
      stock({ balanceId: 'f', expiryDate: '2029-01-01', lotCreatedAt: null, locationCode: 'Z-99' }),
    ];
    const expected = ['f', 'a', 'b', 'c', 'd', 'e'];
    expect(ordered(xs)).toEqual(expected);
    expect(ordered([...xs].reverse())).toEqual(expected);
    expect(ordered([xs[2], xs[5], xs[0], xs[4], xs[1], xs[3]])).toEqual(expected);
    for (const x of xs)
      for (const y of xs) expect(Math.sign(fefoOrder(x, y))).toBe(x === y ? 0 : -Math.sign(fefoOrder(y, x)));
  });
});

describe('takeInOrder', () => {
  const src = (id: string, avail: Decimal.Value) => ({ id, avail });
  const avail = (s: { avail: Decimal.Value }) => s.avail;

  it('takes in the given order (no sorting), each up to what it has, and stops when covered', () => {
    const sources = [src('z', 2), src('a', 5), src('m', 100)];
    const plan = takeInOrder(sources, 4, avail);
    expect(takesOf(plan, (s) => s.id)).toEqual([
      ['z', '2'],
      ['a', '2'],
    ]);
    expect(plan.takes[0].from).toBe(sources[0]);
    expect(plan.shortfall.toFixed()).toBe('0');
  });

  it('does not consult sources after the wanted quantity is covered', () => {
    const seen: string[] = [];
    takeInOrder([src('a', 3), src('b', 3), src('c', 3)], 3, (s) => {
      seen.push(s.id);
      return s.avail;
    });
    expect(seen).toEqual(['a']);
  });

  it('is exact decimal arithmetic (0.1 + 0.2 = 0.3)', () => {
    const plan = takeInOrder([src('a', 0.1), src('b', '0.2'), src('c', 1)], '0.3', avail);
    expect(takesOf(plan, (s) => s.id)).toEqual([
      ['a', '0.1'],
      ['b', '0.2'],
    ]);
    expect(plan.shortfall.toFixed()).toBe('0');
    expect(plan.shortfall.isZero()).toBe(true);
  });

  it('reports the shortfall exactly', () => {
    const plan = takeInOrder([src('a', '0.1'), src('b', '0.2')], '0.7', avail);
    expect(takesOf(plan, (s) => s.id)).toEqual([
      ['a', '0.1'],
      ['b', '0.2'],
    ]);
    expect(plan.shortfall.toFixed()).toBe('0.4');
  });

  it('skips sources with nothing (or less than nothing) available', () => {
    const plan = takeInOrder([src('zero', 0), src('neg', -2), src('zero-text', '0.000000'), src('a', 3)], 2, avail);
    expect(takesOf(plan, (s) => s.id)).toEqual([['a', '2']]);
    expect(plan.shortfall.toFixed()).toBe('0');
  });

  it('wanting nothing takes nothing and lacks nothing', () => {
    const plan = takeInOrder([src('a', 3)], 0, avail);
    expect(plan.takes).toEqual([]);
    expect(plan.shortfall.toFixed()).toBe('0');
  });

  it('with no sources the whole quantity is short', () => {
    const plan = takeInOrder([], '12.5', avail);
    expect(plan.takes).toEqual([]);
    expect(plan.shortfall.toFixed()).toBe('12.5');
  });
});

describe('planAllocation', () => {
  it('takes free stock FEFO and reports take amounts exactly', () => {
    const candidates = [
      stock({ balanceId: 'no-expiry', free: '10' }),
      stock({ balanceId: 'late', expiryDate: '2031-01-01', free: '0.2' }),
      stock({ balanceId: 'soon', expiryDate: '2030-01-01', free: '0.1' }),
    ];
    const plan = planAllocation(candidates, '0.35');
    expect(takesOf(plan, (c) => c.balanceId)).toEqual([
      ['soon', '0.1'],
      ['late', '0.2'],
      ['no-expiry', '0.05'],
    ]);
    expect(plan.shortfall.toFixed()).toBe('0');
    expect(plan.takes[0].from).toBe(candidates[2]);
  });

  it('sums 0.1 + 0.2 style values without float error', () => {
    const plan = planAllocation(
      [stock({ balanceId: 'a', expiryDate: '2030-01-01', free: 0.1 }), stock({ balanceId: 'b', expiryDate: '2030-01-02', free: 0.2 })],
      0.3,
    );
    expect(takesOf(plan, (c) => c.balanceId)).toEqual([
      ['a', '0.1'],
      ['b', '0.2'],
    ]);
    expect(plan.shortfall.toFixed()).toBe('0');
    const total = plan.takes.reduce((s, t) => s.plus(t.qty), new Decimal(0));
    expect(total.toFixed()).toBe('0.3');
  });

  it('keeps six decimals on large quantities', () => {
    const plan = planAllocation(
      [stock({ balanceId: 'a', expiryDate: '2030-01-01', free: '12345678901234.123456' }), stock({ balanceId: 'b', free: '1' })],
      '12345678901234.123457',
    );
    expect(takesOf(plan, (c) => c.balanceId)).toEqual([
      ['a', '12345678901234.123456'],
      ['b', '0.000001'],
    ]);
    expect(plan.shortfall.toFixed()).toBe('0');
  });

  it('reports the shortfall when the candidates do not cover the wanted quantity', () => {
    const plan = planAllocation([stock({ balanceId: 'a', free: '1.5' }), stock({ balanceId: 'b', free: '2.25' })], '5');
    expect(takesOf(plan, (c) => c.balanceId)).toEqual([
      ['a', '1.5'],
      ['b', '2.25'],
    ]);
    expect(plan.shortfall.toFixed()).toBe('1.25');
  });

  it('skips candidates with no free stock', () => {
    const plan = planAllocation(
      [
        stock({ balanceId: 'soonest-empty', expiryDate: '2029-01-01', free: '0' }),
        stock({ balanceId: 'soon-negative', expiryDate: '2029-06-01', free: '-1' }),
        stock({ balanceId: 'later', expiryDate: '2030-01-01', free: '4' }),
      ],
      '3',
    );
    expect(takesOf(plan, (c) => c.balanceId)).toEqual([['later', '3']]);
    expect(plan.shortfall.toFixed()).toBe('0');
  });

  it('uses lot age, location code and balance id to break ties', () => {
    const plan = planAllocation(
      [
        stock({ balanceId: 'b2', expiryDate: '2030-01-01', locationCode: 'A-01', free: 1 }),
        stock({ balanceId: 'b1', expiryDate: '2030-01-01', locationCode: 'A-01', free: 1 }),
        stock({ balanceId: 'b0', expiryDate: '2030-01-01', locationCode: 'A-00', free: 1 }),
        stock({ balanceId: 'old', expiryDate: '2030-01-01', locationCode: 'Z-99', lotCreatedAt: new Date('2020-01-01T00:00:00Z'), free: 1 }),
      ],
      4,
    );
    expect(plan.takes.map((t) => t.from.balanceId)).toEqual(['old', 'b0', 'b1', 'b2']);
  });

  it('does not reorder or change the caller’s candidates', () => {
    const candidates = [stock({ balanceId: 'b', free: '1' }), stock({ balanceId: 'a', expiryDate: '2030-01-01', free: '1' })];
    const before = JSON.stringify(candidates);
    planAllocation(candidates, '2');
    expect(candidates.map((c) => c.balanceId)).toEqual(['b', 'a']);
    expect(JSON.stringify(candidates)).toBe(before);
  });
});

