import { startApp, TestContext } from './app';
import {
  countSessionIn,
  CountSessionState,
  onHand,
  reservationIn,
  ReservationState,
  tenantWithStock,
  transferIn,
  TransferState,
} from './fixtures';
import { expectAudit } from './matchers';

/** The shared test kit itself: every helper reaches what it promises, through the API. */
describe('test kit (test/support/fixtures.ts)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  it('tenantWithStock stocks every item at the first location, in a fresh tenant or a given one', async () => {
    const f = await tenantWithStock(ctx, { qty: 7, items: [{}, {}], locations: 1 });
    expect(f.stocked).toEqual(f.items.map((i) => ({ itemId: i.id, locationId: f.location.id, qty: 7 })));
    for (const item of f.items) expect(await onHand(f.t, { itemId: item.id, locationId: f.location.id })).toBe(7);
    const again = await tenantWithStock(f.t, { qty: 2 });
    expect(again.t).toBe(f.t);
    expect(again.facility.id).not.toBe(f.facility.id);
    expect(await onHand(f.t, { itemId: again.item.id, locationId: again.location.id })).toBe(2);
  });

  it('makes a document in each state, with its audit fields', async () => {
    const { t, ...f } = await tenantWithStock(ctx, { qty: 1 });
    const versions: Record<string, number> = {
      'transfer draft': 1, 'transfer cancelled': 2, 'transfer shipped': 2, 'transfer received': 3,
      'count open': 2, 'count completed': 3, 'count cancelled': 3,
      'reservation open': 1, 'reservation allocated': 2, 'reservation released': 2, 'reservation cancelled': 2, 'reservation fulfilled': 3,
    };
    for (const state of ['draft', 'shipped', 'received', 'cancelled'] as TransferState[]) {
      expectAudit(await transferIn(t, f, state), t.token, { version: versions[`transfer ${state}`] });
    }
    for (const state of ['open', 'completed', 'cancelled'] as CountSessionState[]) {
      const doc = await countSessionIn(t, f, state);
      expect(doc.lines).toHaveLength(1);
      expectAudit(doc, t.token, { version: versions[`count ${state}`] });
    }
    for (const state of ['open', 'allocated', 'released', 'cancelled', 'fulfilled'] as ReservationState[]) {
      expectAudit(await reservationIn(t, f, state), t.token, { version: versions[`reservation ${state}`] });
    }
  });
});
