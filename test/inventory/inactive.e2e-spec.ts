import { startApp, Tenant, TestContext } from '../support/app';
import {
  adjust,
  countSessionIn,
  facilityWithLocations,
  onHand,
  reservationIn,
  tenantWithStock,
  transactionsOf,
  transferIn,
} from '../support/fixtures';
import { expectAudit } from '../support/matchers';

/**
 * CONTRACT §4: an inactive item, facility or location cannot be put on a new document or document line,
 * reserved, counted or adjusted (409 invalid_state); documents that already committed it finish normally.
 * Every case works in a fresh tenant, so "nothing changed" can be checked over the whole tenant.
 */
describe('Inactive master data (CONTRACT §4)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  const deactivateItem = async (t: Tenant, id: string) =>
    expect((await t.patch(`/v1/items/${id}`, { isActive: false }).expect(200)).body.data).toMatchObject({ id, isActive: false });
  const deactivateFacility = async (t: Tenant, id: string) =>
    expect((await t.patch(`/v1/facilities/${id}`, { isActive: false }).expect(200)).body.data).toMatchObject({ id, isActive: false });
  const deactivateLocation = async (t: Tenant, facilityId: string, id: string) =>
    expect((await t.patch(`/v1/facilities/${facilityId}/locations/${id}`, { isActive: false }).expect(200)).body.data).toMatchObject({ id, isActive: false });

  /** Everything inventory a tenant has: stock, ledger, holds and documents. */
  async function world(t: Tenant) {
    const list = async (url: string) => {
      const body = (await t.get(`${url}${url.includes('?') ? '&' : '?'}limit=500`).expect(200)).body;
      return { count: body.count, data: body.data };
    };
    return {
      balances: await list('/v1/inventory/balances'),
      transactions: await list('/v1/inventory/transactions'),
      reservations: await list('/v1/inventory/reservations'),
      allocations: await list('/v1/inventory/allocations'),
      transfers: await list('/v1/inventory/transfers'),
      countSessions: await list('/v1/inventory/count-sessions'),
    };
  }

  /** The request is refused with 409 invalid_state. */
  const refused = (res: { status: number; body: unknown }) => {
    expect({ status: res.status, body: res.body }).toEqual({ status: 409, body: expect.objectContaining({ error: 'invalid_state', status: 409 }) });
  };

  const transferLine = (itemId: string, fromLocationId: string, toLocationId: string, qty = 1) => ({ itemId, qty, fromLocationId, toLocationId });

  describe('an inactive item', () => {
    it('cannot be adjusted, in or out', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      await deactivateItem(t, f.item.id);
      const before = await world(t);
      refused(await t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1, reason: 'found' }));
      refused(await t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: -1, reason: 'lost' }));
      expect(await world(t)).toEqual(before);
      expect(await onHand(t, { itemId: f.item.id, locationId: f.location.id })).toBe(10);
    });

    it('cannot be reserved', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      await deactivateItem(t, f.item.id);
      const before = await world(t);
      refused(await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 1 }));
      expect(await world(t)).toEqual(before);
      expect(before.reservations.count).toBe(0);
    });

    it('cannot be counted (count lines refused, the session unchanged)', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const session = await countSessionIn(t, f, 'open', { lines: [] });
      await deactivateItem(t, f.item.id);
      const before = await world(t);
      refused(await t.post(`/v1/inventory/count-sessions/${session.id}/lines`, { lines: [{ itemId: f.item.id, locationId: f.location.id, countedQty: 7 }] }));
      expect(await world(t)).toEqual(before);
      expect((await t.get(`/v1/inventory/count-sessions/${session.id}`).expect(200)).body.data).toEqual(session);
    });

    it('cannot be put on a new transfer order', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const dest = await facilityWithLocations(t, 1);
      await deactivateItem(t, f.item.id);
      const before = await world(t);
      const res = await t.post('/v1/inventory/transfers', {
        fromFacilityId: f.facility.id,
        toFacilityId: dest.facility.id,
        lines: [transferLine(f.item.id, f.location.id, dest.location.id)],
      });
      refused(res);
      expect(await world(t)).toEqual(before);
      expect(before.transfers.count).toBe(0);
    });

    it('cannot be put on a draft transfer by PATCH (the draft unchanged)', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10, items: [{}, {}] });
      const [active, inactive] = f.items;
      const dest = await facilityWithLocations(t, 1);
      const draft = await transferIn(t, f, 'draft', { item: active, to: dest, stock: false });
      await deactivateItem(t, inactive.id);
      const before = await world(t);
      const res = await t.patch(`/v1/inventory/transfers/${draft.id}`, {
        lines: [transferLine(active.id, f.location.id, dest.location.id), transferLine(inactive.id, f.location.id, dest.location.id)],
      });
      refused(res);
      expect(await world(t)).toEqual(before);
      expect((await t.get(`/v1/inventory/transfers/${draft.id}`).expect(200)).body.data).toEqual(draft);
    });
  });

  describe('an inactive facility', () => {
    it('refuses adjustments at its (active) locations, in or out', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      await deactivateFacility(t, f.facility.id);
      const before = await world(t);
      refused(await t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1, reason: 'found' }));
      refused(await t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: -1, reason: 'lost' }));
      expect(await world(t)).toEqual(before);
      expect(await onHand(t, { itemId: f.item.id, locationId: f.location.id })).toBe(10);
    });

    it('refuses reservations at it', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      await deactivateFacility(t, f.facility.id);
      const before = await world(t);
      refused(await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 1 }));
      expect(await world(t)).toEqual(before);
      expect(before.reservations.count).toBe(0);
    });

    it('refuses a count session at it', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      await deactivateFacility(t, f.facility.id);
      const before = await world(t);
      refused(await t.post('/v1/inventory/count-sessions', { facilityId: f.facility.id }));
      expect(await world(t)).toEqual(before);
      expect(before.countSessions.count).toBe(0);
    });

    it('refuses a transfer order from it or to it', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const closed = await facilityWithLocations(t, 1);
      await adjust(t, { itemId: f.item.id, locationId: closed.location.id, qtyDelta: 5 });
      await deactivateFacility(t, closed.facility.id);
      const before = await world(t);
      const to = await t.post('/v1/inventory/transfers', {
        fromFacilityId: f.facility.id,
        toFacilityId: closed.facility.id,
        lines: [transferLine(f.item.id, f.location.id, closed.location.id)],
      });
      refused(to);
      const from = await t.post('/v1/inventory/transfers', {
        fromFacilityId: closed.facility.id,
        toFacilityId: f.facility.id,
        lines: [transferLine(f.item.id, closed.location.id, f.location.id)],
      });
      refused(from);
      expect(await world(t)).toEqual(before);
      expect(before.transfers.count).toBe(0);
    });

    it('refuses allocations pinned at it; automatic allocation passes it by', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const [open, closed] = f.locations;
      await adjust(t, { itemId: f.item.id, locationId: closed.id, qtyDelta: 5 });
      const r = (await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 12 }).expect(201)).body.data;
      await deactivateLocation(t, f.facility.id, closed.id);
      const before = await world(t);
      refused(await t.post(`/v1/inventory/reservations/${r.id}/allocate`, { allocations: [{ locationId: closed.id, qty: 2 }] }));
      expect(await world(t)).toEqual(before);
      // The automatic plan finds only the 10 at the active location: not enough for 12.
      expect((await t.post(`/v1/inventory/reservations/${r.id}/allocate`)).status).toBe(409);
      const partial = (await t.post(`/v1/inventory/reservations/${r.id}/allocate`, { allocations: [{ locationId: open.id, qty: 10 }] }).expect(200)).body.data;
      expect(partial.allocations).toEqual([expect.objectContaining({ locationId: open.id, qty: 10 })]);
    });

    it('automatic allocation passes it by where it comes first in the planner\'s order (its stock counts for nothing)', async () => {
      // B-1 (inactive) comes before B-2 in the planner's order: the statement that locks the stock returns
      // rows as far as the free stock at active locations reaches what is asked, so B-1's 5 must not count.
      const { t, ...f } = await tenantWithStock(ctx, { qty: 5 });
      const [closed, open] = f.locations;
      await adjust(t, { itemId: f.item.id, locationId: open.id, qtyDelta: 2 });
      await deactivateLocation(t, f.facility.id, closed.id);
      const r = (await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 2 }).expect(201)).body.data;
      const allocated = (await t.post(`/v1/inventory/reservations/${r.id}/allocate`).expect(200)).body.data;
      expect(allocated).toMatchObject({ status: 'allocated', qtyAllocated: 2 });
      expect(allocated.allocations).toEqual([expect.objectContaining({ locationId: open.id, qty: 2 })]);
    });
  });

  describe('a draft transfer has committed nothing', () => {
    it('cannot ship once its item or source location is inactive (the draft unchanged)', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const byItem = await transferIn(t, f, 'draft', { stock: false });
      await deactivateItem(t, f.item.id);
      const before = await world(t);
      refused(await t.post(`/v1/inventory/transfers/${byItem.id}/ship`));
      expect(await world(t)).toEqual(before);

      const g = await tenantWithStock(ctx, { qty: 10 });
      const byLocation = await transferIn(g.t, g, 'draft', { stock: false });
      await deactivateLocation(g.t, g.facility.id, g.location.id);
      refused(await g.t.post(`/v1/inventory/transfers/${byLocation.id}/ship`));
      expect((await g.t.get(`/v1/inventory/transfers/${byLocation.id}`).expect(200)).body.data).toMatchObject({ status: 'draft', version: 1 });
    });
  });

  describe('an inactive location', () => {
    it('refuses adjustments at it, in or out', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      await deactivateLocation(t, f.facility.id, f.location.id);
      const before = await world(t);
      refused(await t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1, reason: 'found' }));
      refused(await t.post('/v1/inventory/adjustments', { itemId: f.item.id, locationId: f.location.id, qtyDelta: -1, reason: 'lost' }));
      expect(await world(t)).toEqual(before);
      expect(await onHand(t, { itemId: f.item.id, locationId: f.location.id })).toBe(10);
    });

    it('refuses count lines at it (the session unchanged)', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const session = await countSessionIn(t, f, 'open', { lines: [] });
      await deactivateLocation(t, f.facility.id, f.location.id);
      const before = await world(t);
      refused(await t.post(`/v1/inventory/count-sessions/${session.id}/lines`, { lines: [{ itemId: f.item.id, locationId: f.location.id, countedQty: 7 }] }));
      expect(await world(t)).toEqual(before);
      expect((await t.get(`/v1/inventory/count-sessions/${session.id}`).expect(200)).body.data).toEqual(session);
    });

    it('refuses transfer lines from it or to it', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const [open, closedFrom] = f.locations;
      const dest = await facilityWithLocations(t, 2);
      const [toOpen, closedTo] = dest.locations;
      await adjust(t, { itemId: f.item.id, locationId: closedFrom.id, qtyDelta: 5 });
      await deactivateLocation(t, f.facility.id, closedFrom.id);
      await deactivateLocation(t, dest.facility.id, closedTo.id);
      const before = await world(t);
      const create = (line: object) => t.post('/v1/inventory/transfers', { fromFacilityId: f.facility.id, toFacilityId: dest.facility.id, lines: [line] });
      refused(await create(transferLine(f.item.id, closedFrom.id, toOpen.id)));
      refused(await create(transferLine(f.item.id, open.id, closedTo.id)));
      expect(await world(t)).toEqual(before);
      expect(before.transfers.count).toBe(0);
    });
  });

  describe('documents that already committed it finish normally', () => {
    it('receives a shipped transfer after its item, destination facility and destination location were deactivated', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const dest = await facilityWithLocations(t, 1);
      const shipped = await transferIn(t, f, 'shipped', { qty: 4, to: dest, stock: false });
      await deactivateItem(t, f.item.id);
      await deactivateFacility(t, dest.facility.id);
      await deactivateLocation(t, dest.facility.id, dest.location.id);

      const res = await t.post(`/v1/inventory/transfers/${shipped.id}/receive`);
      expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { data: { id: shipped.id, status: 'received' } } });
      expectAudit(res.body.data, t.token, { version: 3 });
      expect(res.body.data.lines).toEqual([expect.objectContaining({ itemId: f.item.id, qty: 4, qtyShipped: 4, qtyReceived: 4 })]);
      expect(await onHand(t, { itemId: f.item.id, locationId: dest.location.id })).toBe(4);
      expect(await onHand(t, { itemId: f.item.id, locationId: f.location.id })).toBe(6);
      expect((await transactionsOf(t, shipped.id)).data.map((x) => x.type)).toEqual(['transfer_in', 'transfer_out']);
    });

    it('fulfils an allocated reservation after its item was deactivated', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const allocated = await reservationIn(t, f, 'allocated', { qty: 3, stock: false });
      await deactivateItem(t, f.item.id);

      const res = await t.post(`/v1/inventory/reservations/${allocated.id}/fulfill`);
      expect({ status: res.status, body: res.body }).toMatchObject({
        status: 200,
        body: { data: { id: allocated.id, status: 'fulfilled', qtyFulfilled: 3, qtyAllocated: 0, allocations: [] } },
      });
      expectAudit(res.body.data, t.token, { version: 3 });
      expect(await onHand(t, { itemId: f.item.id, locationId: f.location.id })).toBe(7);
      expect((await transactionsOf(t, allocated.id)).data.map((x) => x.type)).toEqual(['fulfillment']);
    });

    it('completes an open count session with lines already counted after the item was deactivated', async () => {
      const { t, ...f } = await tenantWithStock(ctx, { qty: 10 });
      const session = await countSessionIn(t, f, 'open', { countedQty: 8 });
      await deactivateItem(t, f.item.id);

      const res = await t.post(`/v1/inventory/count-sessions/${session.id}/complete`);
      expect({ status: res.status, body: res.body }).toMatchObject({ status: 200, body: { data: { id: session.id, status: 'completed' } } });
      expectAudit(res.body.data, t.token, { version: 3 });
      expect(res.body.data.lines).toEqual([expect.objectContaining({ itemId: f.item.id, locationId: f.location.id, countedQty: 8, systemQty: 10, varianceQty: -2 })]);
      expect(await onHand(t, { itemId: f.item.id, locationId: f.location.id })).toBe(8);
    });
  });
});
