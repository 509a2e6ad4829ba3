import { newTenant, startApp, TestContext } from '../support/app';
import { adjust, inventoryFixture } from '../support/fixtures';

describe('inventory smoke', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  it('adjusts, reserves, allocates, fulfills', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const txn = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 10 })).body.data;
    expect(txn).toMatchObject({ type: 'adjustment', txnNo: 'TX-000001', lines: [{ lineNo: 1, qtyDelta: 10 }] });
    const r = (await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 4 }).expect(201)).body.data;
    expect(r).toMatchObject({ reservationNo: 'RS-000001', status: 'open', qty: 4 });
    await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 7 }).expect(409);
    const a = (await t.post(`/v1/inventory/reservations/${r.id}/allocate`).expect(200)).body.data;
    expect(a).toMatchObject({ status: 'allocated', qtyAllocated: 4, allocations: [{ qty: 4, locationId: f.location.id }] });
    const av = (await t.get(`/v1/inventory/availability?itemId=${f.item.id}&groupBy=facility`).expect(200)).body.data;
    expect(av).toEqual([{ itemId: f.item.id, facilityId: f.facility.id, qtyOnHand: 10, qtyAllocated: 4, qtyReserved: 0, qtyAvailable: 6 }]);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: -7 }, 409);
    const done = (await t.post(`/v1/inventory/reservations/${r.id}/fulfill`).expect(200)).body.data;
    expect(done).toMatchObject({ status: 'fulfilled', qtyFulfilled: 4, qtyAllocated: 0 });
    const bal = (await t.get(`/v1/inventory/balances?itemId=${f.item.id}`).expect(200)).body;
    expect(bal.data).toMatchObject([{ qtyOnHand: 6, qtyAllocated: 0, statusCode: 'AVAILABLE' }]);
    const txns = (await t.get(`/v1/inventory/transactions?itemId=${f.item.id}`).expect(200)).body;
    expect(txns.count).toBe(2);
    expect(txns.data[0]).toMatchObject({ type: 'fulfillment', lines: [{ qtyDelta: -4 }] });
  });
});
