import Decimal from 'decimal.js';
import { HeldStock, planIssue } from './allocation-planner';

const held = (over: Partial<HeldStock> & { allocationId: string }): HeldStock => ({
  balanceId: `bal-${over.allocationId}`,
  locationId: 'loc-1',
  locationCode: 'A-01',
  lotId: null,
  expiryDate: null,
  statusId: 'status-available',
  qty: 0,
  ...over,
});

/** A plan's takes as [id, qty] pairs. */
const takesOf = <T>(plan: { takes: Array<{ from: T; qty: Decimal }> }, id: (t: T) => string) =>
  plan.takes.map((t) => [id(t.from), t.qty.toFixed()]);

describe('planIssue', () => {
  const reservation = () => [
    held({ allocationId: 'x-none', locationId: 'loc-1', locationCode: 'A-01', lotId: 'lot-3', expiryDate: null, qty: '5' }),
    held({ allocationId: 'x-late', locationId: 'loc-2', locationCode: 'B-01', lotId: 'lot-2', expiryDate: '2031-01-01', qty: '2' }),
    held({ allocationId: 'x-soon', locationId: 'loc-1', locationCode: 'A-01', lotId: 'lot-1', expiryDate: '2030-01-01', qty: '1.5' }),
    held({ allocationId: 'x-soon-b', locationId: 'loc-2', locationCode: 'B-01', lotId: 'lot-1', expiryDate: '2030-01-01', qty: '0.25' }),
  ];
  const ids = (plan: { takes: Array<{ from: HeldStock; qty: Decimal }> }) => takesOf(plan, (a) => a.allocationId);

  it('issues earliest expiry first, then by location code, no expiry last', () => {
    const plan = planIssue(reservation(), '4');
    expect(ids(plan)).toEqual([
      ['x-soon', '1.5'],
      ['x-soon-b', '0.25'],
      ['x-late', '2'],
      ['x-none', '0.25'],
    ]);
    expect(plan.shortfall.toFixed()).toBe('0');
  });

  it('orders equal expiry and location by balance id', () => {
    const plan = planIssue(
      [
        held({ allocationId: 'p', balanceId: 'bal-9', qty: 1 }),
        held({ allocationId: 'q', balanceId: 'bal-1', qty: 1 }),
      ],
      2,
    );
    expect(plan.takes.map((t) => t.from.allocationId)).toEqual(['q', 'p']);
  });

  it('with wanted undefined takes everything that matches', () => {
    const plan = planIssue(reservation());
    expect(ids(plan)).toEqual([
      ['x-soon', '1.5'],
      ['x-soon-b', '0.25'],
      ['x-late', '2'],
      ['x-none', '5'],
    ]);
    expect(plan.shortfall.toFixed()).toBe('0');
  });

  it('with wanted undefined sums exact decimals (0.1 + 0.2)', () => {
    const plan = planIssue([held({ allocationId: 'a', qty: 0.1 }), held({ allocationId: 'b', balanceId: 'bal-z', qty: '0.2' })]);
    expect(ids(plan)).toEqual([
      ['a', '0.1'],
      ['b', '0.2'],
    ]);
    expect(plan.takes.reduce((s, t) => s.plus(t.qty), new Decimal(0)).toFixed()).toBe('0.3');
  });

  it('keeps six decimals on large quantities (no float on the way)', () => {
    const allocations = [
      held({ allocationId: 'a', expiryDate: '2030-01-01', qty: new Decimal('12345678901234.123456') }),
      held({ allocationId: 'b', balanceId: 'bal-z', qty: '99999999999999.999999' }),
    ];
    expect(ids(planIssue(allocations))).toEqual([
      ['a', '12345678901234.123456'],
      ['b', '99999999999999.999999'],
    ]);
    const plan = planIssue(allocations, '12345678901234.123457');
    expect(ids(plan)).toEqual([
      ['a', '12345678901234.123456'],
      ['b', '0.000001'],
    ]);
  });

  it('filters by location', () => {
    const plan = planIssue(reservation(), undefined, { locationId: 'loc-2' });
    expect(ids(plan)).toEqual([
      ['x-soon-b', '0.25'],
      ['x-late', '2'],
    ]);
  });

  it('filters by lot', () => {
    const plan = planIssue(reservation(), undefined, { lotId: 'lot-1' });
    expect(ids(plan)).toEqual([
      ['x-soon', '1.5'],
      ['x-soon-b', '0.25'],
    ]);
  });

  it('filters by location and lot together', () => {
    const plan = planIssue(reservation(), undefined, { locationId: 'loc-2', lotId: 'lot-1' });
    expect(ids(plan)).toEqual([['x-soon-b', '0.25']]);
  });

  it('null or absent filters match everything', () => {
    expect(ids(planIssue(reservation(), undefined, { locationId: null, lotId: null }))).toHaveLength(4);
    expect(ids(planIssue(reservation(), undefined, {}))).toHaveLength(4);
  });

  it('a filter that matches nothing takes nothing (wanted undefined: nothing short either)', () => {
    const plan = planIssue(reservation(), undefined, { locationId: 'loc-9' });
    expect(plan.takes).toEqual([]);
    expect(plan.shortfall.toFixed()).toBe('0');
  });

  it('reports the shortfall of what the matching allocations do not cover', () => {
    const plan = planIssue(reservation(), '3', { locationId: 'loc-2' });
    expect(ids(plan)).toEqual([
      ['x-soon-b', '0.25'],
      ['x-late', '2'],
    ]);
    expect(plan.shortfall.toFixed()).toBe('0.75');
  });

  it('skips allocations with nothing left', () => {
    const plan = planIssue(
      [held({ allocationId: 'empty', expiryDate: '2029-01-01', qty: '0' }), held({ allocationId: 'full', balanceId: 'bal-z', expiryDate: '2030-01-01', qty: '2' })],
      '1',
    );
    expect(ids(plan)).toEqual([['full', '1']]);
  });

  it('neither mutates the allocations nor reorders the caller’s array', () => {
    const allocations = reservation();
    const before = JSON.stringify(allocations);
    const plan = planIssue(allocations, '4');
    expect(JSON.stringify(allocations)).toBe(before);
    expect(allocations.map((a) => a.allocationId)).toEqual(['x-none', 'x-late', 'x-soon', 'x-soon-b']);
    // Takes point at the caller's own objects (so the caller can decrease their qty).
    expect(plan.takes[0].from).toBe(allocations[2]);
  });

  describe('two lines of one posting on the same allocation objects (the Issues.plan pattern)', () => {
    /** What src/inventory/ledger/issues.ts does after each take. */
    const consume = (plan: { takes: Array<{ from: HeldStock; qty: Decimal }> }) => {
      for (const { from, qty } of plan.takes) from.qty = new Decimal(from.qty).minus(qty);
    };

    it('the second plan sees only what the first left', () => {
      const allocations = reservation();
      const first = planIssue(allocations, '2');
      expect(ids(first)).toEqual([
        ['x-soon', '1.5'],
        ['x-soon-b', '0.25'],
        ['x-late', '0.25'],
      ]);
      consume(first);

      const second = planIssue(allocations, '2');
      expect(ids(second)).toEqual([
        ['x-late', '1.75'],
        ['x-none', '0.25'],
      ]);
      expect(second.shortfall.toFixed()).toBe('0');
      consume(second);

      expect(allocations.map((a) => [a.allocationId, new Decimal(a.qty).toFixed()])).toEqual([
        ['x-none', '4.75'],
        ['x-late', '0'],
        ['x-soon', '0'],
        ['x-soon-b', '0'],
      ]);
    });

    it('does not issue the same stock twice: the rest is short', () => {
      const allocations = [held({ allocationId: 'a', qty: '0.1' }), held({ allocationId: 'b', balanceId: 'bal-z', qty: '0.2' })];
      const first = planIssue(allocations, '0.25');
      consume(first);
      const second = planIssue(allocations, '0.1');
      expect(ids(second)).toEqual([['b', '0.05']]);
      expect(second.shortfall.toFixed()).toBe('0.05');
    });

    it('wanted undefined after a partial issue takes only the remainder', () => {
      const allocations = reservation();
      consume(planIssue(allocations, '1', { lotId: 'lot-1' }));
      const rest = planIssue(allocations, undefined, { lotId: 'lot-1' });
      expect(ids(rest)).toEqual([
        ['x-soon', '0.5'],
        ['x-soon-b', '0.25'],
      ]);
      expect(rest.shortfall.toFixed()).toBe('0');
      consume(rest);
      const none = planIssue(allocations, undefined, { lotId: 'lot-1' });
      expect(none.takes).toEqual([]);
      expect(none.shortfall.toFixed()).toBe('0');
    });
  });
});
