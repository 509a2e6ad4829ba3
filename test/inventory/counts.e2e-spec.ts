import { randomUUID } from 'node:crypto';
import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import { adjust, facilityWithLocations, InventoryFixture, inventoryFixture, lotId, newItem, onHand, transactionsOf } from '../support/fixtures';
import { auditFields, ISO_MS } from '../support/matchers';

interface CountLine {
  itemId: string;
  locationId: string;
  lotId: string | null;
  lotNo: string | null;
  countedQty: number;
  systemQty: number | null;
  varianceQty: number | null;
}

describe('Count sessions', () => {
  let ctx: TestContext;
  let t: Tenant;
  let f: InventoryFixture;

  beforeAll(async () => {
    ctx = await startApp();
    t = await newTenant(ctx);
    f = await inventoryFixture(t, { locations: 2 });
  });
  afterAll(() => ctx.close());

  const open = async (notes?: string) => (await t.post('/v1/inventory/count-sessions', { facilityId: f.facility.id, notes }).expect(201)).body.data;
  const count = (id: string, lines: object[], status = 200) => t.post(`/v1/inventory/count-sessions/${id}/lines`, { lines }).expect(status);
  const action = (id: string, name: string, status = 200) => t.post(`/v1/inventory/count-sessions/${id}/${name}`).expect(status);
  const find = (lines: CountLine[], itemId: string, locationId: string, lotNo: string | null = null) =>
    lines.find((l) => l.itemId === itemId && l.locationId === locationId && l.lotNo === lotNo);

  it('records counts (a later count replaces the earlier) and completes with one count transaction setting each key to its count', async () => {
    const [loc0, loc1] = f.locations.map((l) => l.id);
    const a = await newItem(t, f.uom('EA'));
    const b = await newItem(t, f.uom('EA'), { lotTracking: 'required' });
    const c = await newItem(t, f.uom('EA'));
    await adjust(t, { itemId: a.id, locationId: loc0, qtyDelta: 10 });
    await adjust(t, { itemId: a.id, locationId: loc1, qtyDelta: 4 });
    await adjust(t, { itemId: b.id, locationId: loc0, qtyDelta: 6, lotNo: 'L1' });
    const l1 = await lotId(t, b.id, 'L1');

    const created = await t.post('/v1/inventory/count-sessions', { facilityId: f.facility.id, notes: 'year end' }).expect(201);
    const s = created.body.data;
    expect(s).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      sessionNo: 'CS-000001',
      facilityId: f.facility.id,
      status: 'open',
      notes: 'year end',
      transactionId: null,
      completedAt: null,
      lines: [],
      ...auditFields(t.token),
    });
    expect(created.headers.etag).toBe('"1"');

    const first = (
      await count(s.id, [
        { itemId: a.id, locationId: loc0, countedQty: 7 },
        { itemId: a.id, locationId: loc1, countedQty: 4 },
        { itemId: b.id, locationId: loc0, lotNo: 'L1', countedQty: 9 },
        { itemId: b.id, locationId: loc0, lotNo: 'L2', countedQty: 3 },
        { itemId: c.id, locationId: loc1, countedQty: 1 },
        // the same key twice in one request: the later wins
        { itemId: c.id, locationId: loc1, countedQty: 2 },
      ])
    ).body.data;
    expect(first).toMatchObject({ status: 'open', version: 2 });
    expect(first.lines).toHaveLength(5);
    expect(find(first.lines, b.id, loc0, 'L1')).toEqual({ itemId: b.id, locationId: loc0, lotId: l1, lotNo: 'L1', countedQty: 9, systemQty: null, varianceQty: null });
    expect(find(first.lines, b.id, loc0, 'L2')).toMatchObject({ lotId: null, countedQty: 3 });
    expect(find(first.lines, c.id, loc1)).toMatchObject({ countedQty: 2 });

    // a recount of (a, loc0) replaces 7 by 8
    const second = (await count(s.id, [{ itemId: a.id, locationId: loc0, countedQty: 8 }])).body.data;
    expect(second).toMatchObject({ version: 3 });
    expect(second.lines).toHaveLength(5);
    expect(find(second.lines, a.id, loc0)).toMatchObject({ countedQty: 8 });
    // counting moves nothing
    expect(await onHand(t, { itemId: a.id, locationId: loc0 })).toBe(10);

    const done = (await action(s.id, 'complete')).body.data;
    expect(done).toMatchObject({ status: 'completed', version: 4, completedAt: expect.stringMatching(ISO_MS), transactionId: expect.any(String) });
    const l2 = await lotId(t, b.id, 'L2');
    // system = on hand at completion; variance = counted − system
    expect(find(done.lines, a.id, loc0)).toMatchObject({ countedQty: 8, systemQty: 10, varianceQty: -2 });
    expect(find(done.lines, a.id, loc1)).toMatchObject({ countedQty: 4, systemQty: 4, varianceQty: 0 });
    expect(find(done.lines, b.id, loc0, 'L1')).toMatchObject({ lotId: l1, countedQty: 9, systemQty: 6, varianceQty: 3 });
    expect(find(done.lines, b.id, loc0, 'L2')).toMatchObject({ lotId: l2, countedQty: 3, systemQty: 0, varianceQty: 3 });
    expect(find(done.lines, c.id, loc1)).toMatchObject({ countedQty: 2, systemQty: 0, varianceQty: 2 });

    const txn = (await t.get(`/v1/inventory/transactions/${done.transactionId}`).expect(200)).body.data;
    expect(txn).toMatchObject({ type: 'count', sourceType: 'count_session', sourceId: s.id });
    // one line per non-zero variance, all in AVAILABLE
    const deltas = txn.lines.map((l: { itemId: string; locationId: string; lotId: string | null; statusId: string; qtyDelta: number }) => [l.itemId, l.locationId, l.lotId, l.statusId, l.qtyDelta]);
    expect(deltas).toHaveLength(4);
    expect(deltas).toEqual(
      expect.arrayContaining([
        [a.id, loc0, null, f.status('AVAILABLE'), -2],
        [b.id, loc0, l1, f.status('AVAILABLE'), 3],
        [b.id, loc0, l2, f.status('AVAILABLE'), 3],
        [c.id, loc1, null, f.status('AVAILABLE'), 2],
      ]),
    );
    expect((await transactionsOf(t, s.id)).count).toBe(1);

    // balances now equal the counts
    expect(await onHand(t, { itemId: a.id, locationId: loc0 })).toBe(8);
    expect(await onHand(t, { itemId: a.id, locationId: loc1 })).toBe(4);
    expect(await onHand(t, { itemId: b.id, locationId: loc0, lotId: l1 })).toBe(9);
    expect(await onHand(t, { itemId: b.id, locationId: loc0, lotId: l2 })).toBe(3);
    expect(await onHand(t, { itemId: c.id, locationId: loc1 })).toBe(2);

    // completed is final
    expect((await action(s.id, 'complete', 409)).body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('completed') });
    expect((await count(s.id, [{ itemId: a.id, locationId: loc0, countedQty: 1 }], 409)).body.error).toBe('invalid_state');
    expect((await action(s.id, 'cancel', 409)).body.error).toBe('invalid_state');
  });

  it('counts only the AVAILABLE status: stock in other statuses is left alone', async () => {
    const item = await newItem(t, f.uom('EA'));
    const loc = f.locations[0].id;
    await adjust(t, { itemId: item.id, locationId: loc, qtyDelta: 5 });
    await adjust(t, { itemId: item.id, locationId: loc, qtyDelta: 2, statusId: f.status('QUARANTINE') });
    const s = await open();
    await count(s.id, [{ itemId: item.id, locationId: loc, countedQty: 6 }]);
    const done = (await action(s.id, 'complete')).body.data;
    expect(done.lines[0]).toMatchObject({ systemQty: 5, varianceQty: 1 });
    expect(await onHand(t, { itemId: item.id, locationId: loc })).toBe(6);
    expect(await onHand(t, { itemId: item.id, locationId: loc, statusCode: 'QUARANTINE' })).toBe(2);
  });

  it('posts nothing when every variance is 0 (an unknown lot counted 0 included)', async () => {
    const item = await newItem(t, f.uom('EA'));
    const lotted = await newItem(t, f.uom('EA'), { lotTracking: 'required' });
    await adjust(t, { itemId: item.id, locationId: f.locations[0].id, qtyDelta: 5 });
    const s = await open();
    await count(s.id, [
      { itemId: item.id, locationId: f.locations[0].id, countedQty: 5 },
      { itemId: lotted.id, locationId: f.locations[0].id, lotNo: 'NONE', countedQty: 0 },
    ]);
    const done = (await action(s.id, 'complete')).body.data;
    expect(done).toMatchObject({ status: 'completed', transactionId: null });
    expect(find(done.lines, item.id, f.locations[0].id)).toMatchObject({ systemQty: 5, varianceQty: 0 });
    expect(find(done.lines, lotted.id, f.locations[0].id, 'NONE')).toMatchObject({ lotId: null, systemQty: 0, varianceQty: 0 });
    expect((await transactionsOf(t, s.id)).count).toBe(0);
    expect((await t.get(`/v1/inventory/lots?itemId=${lotted.id}`).expect(200)).body.count).toBe(0);
    expect(await onHand(t, { itemId: item.id, locationId: f.locations[0].id })).toBe(5);
  });

  it('refuses a count below allocated or reserved stock (409 insufficient_stock) and leaves the session open', async () => {
    const loc = f.locations[0].id;
    const allocated = await newItem(t, f.uom('EA'));
    await adjust(t, { itemId: allocated.id, locationId: loc, qtyDelta: 10 });
    const r = (await t.post('/v1/inventory/reservations', { itemId: allocated.id, facilityId: f.facility.id, qty: 6 }).expect(201)).body.data;
    await t.post(`/v1/inventory/reservations/${r.id}/allocate`).expect(200);

    const s = await open();
    await count(s.id, [{ itemId: allocated.id, locationId: loc, countedQty: 4 }]);
    const refused = (await action(s.id, 'complete', 409)).body;
    expect(refused).toMatchObject({ error: 'insufficient_stock', details: [{ itemId: allocated.id, locationId: loc }] });
    const still = (await t.get(`/v1/inventory/count-sessions/${s.id}`).expect(200)).body.data;
    expect(still).toMatchObject({ status: 'open', version: 2, transactionId: null, completedAt: null });
    expect(still.lines[0]).toMatchObject({ countedQty: 4, systemQty: null, varianceQty: null });
    expect(await onHand(t, { itemId: allocated.id, locationId: loc })).toBe(10);
    expect((await transactionsOf(t, s.id)).count).toBe(0);

    // holds are released first, explicitly; then the count goes through: 4 − 10 = −6
    await t.post(`/v1/inventory/reservations/${r.id}/release`).expect(200);
    const done = (await action(s.id, 'complete')).body.data;
    expect(done.lines[0]).toMatchObject({ systemQty: 10, varianceQty: -6 });
    expect(await onHand(t, { itemId: allocated.id, locationId: loc })).toBe(4);

    // an open (unallocated) reservation holds stock at the facility too: 10 on hand, 8 reserved, counted 5
    const reserved = await newItem(t, f.uom('EA'));
    await adjust(t, { itemId: reserved.id, locationId: loc, qtyDelta: 10 });
    await t.post('/v1/inventory/reservations', { itemId: reserved.id, facilityId: f.facility.id, qty: 8 }).expect(201);
    const s2 = await open();
    await count(s2.id, [{ itemId: reserved.id, locationId: loc, countedQty: 5 }]);
    expect((await action(s2.id, 'complete', 409)).body.error).toBe('insufficient_stock');
    expect((await t.get(`/v1/inventory/count-sessions/${s2.id}`).expect(200)).body.data.status).toBe('open');
    expect(await onHand(t, { itemId: reserved.id, locationId: loc })).toBe(10);
  });

  it('validates count lines', async () => {
    const other = await facilityWithLocations(t, 1);
    const item = await newItem(t, f.uom('EA'));
    const lotted = await newItem(t, f.uom('EA'), { lotTracking: 'required' });
    const serial = await newItem(t, f.uom('EA'), { serialTracking: 'required' });
    const nonStock = await newItem(t, f.uom('EA'), { itemKind: 'non_stock' });
    const expiring = await newItem(t, f.uom('EA'), { lotTracking: 'required', expiryTracking: 'required' });
    const loc = f.locations[0].id;
    const s = await open();
    const details = async (line: object, status = 400) => (await count(s.id, [line], status)).body.details;

    expect(await details({ itemId: item.id, locationId: other.location.id, countedQty: 1 })).toEqual([
      { field: 'lines[0].locationId', message: 'is a location of another facility' },
    ]);
    expect(await details({ itemId: nonStock.id, locationId: loc, countedQty: 1 })).toEqual([
      { field: 'lines[0].itemId', message: expect.stringContaining('non_stock') },
    ]);
    expect(await details({ itemId: serial.id, locationId: loc, countedQty: 1 })).toEqual([
      { field: 'lines[0].itemId', message: expect.stringContaining('cannot be counted by quantity') },
    ]);
    expect(await details({ itemId: lotted.id, locationId: loc, countedQty: 1 })).toEqual([
      { field: 'lines[0].lotNo', message: expect.stringContaining('is required') },
    ]);
    expect(await details({ itemId: item.id, locationId: loc, lotNo: 'X', countedQty: 1 })).toEqual([
      { field: 'lines[0].lotNo', message: expect.stringContaining('must be empty') },
    ]);
    expect(await details({ itemId: expiring.id, locationId: loc, lotNo: 'NEW', countedQty: 1 })).toEqual([
      { field: 'lines[0].lotNo', message: expect.stringContaining('expiry') },
    ]);
    expect(await details({ itemId: item.id, locationId: loc, countedQty: 1.5 })).toEqual([
      { field: 'lines[0].countedQty', message: expect.stringContaining('at most 0 decimals') },
    ]);
    expect((await details({ itemId: item.id, locationId: loc, countedQty: -1 }))[0].field).toBe('lines[0].countedQty');
    expect(await details({ itemId: randomUUID(), locationId: loc, countedQty: 1 }, 404)).toEqual([{ field: 'lines[0].itemId', message: 'not found' }]);
    expect(await details({ itemId: item.id, locationId: randomUUID(), countedQty: 1 }, 404)).toEqual([{ field: 'lines[0].locationId', message: 'not found' }]);
    await count(s.id, [], 400);
    // A nested array is not a line (it used to be read as one with no ids: a wrong 404).
    const nested = await count(s.id, [[{ itemId: item.id, locationId: loc, countedQty: 1 }]], 400);
    expect(nested.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'lines', message: 'must contain only objects' }] });
    // nothing was recorded, and the version did not move
    expect((await t.get(`/v1/inventory/count-sessions/${s.id}`).expect(200)).body.data).toMatchObject({ lines: [], version: 1 });
    // a session without counts cannot complete
    expect((await action(s.id, 'complete', 409)).body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('no counted lines') });

    expect((await t.post('/v1/inventory/count-sessions', { facilityId: randomUUID() }).expect(404)).body.details).toEqual([{ field: 'facilityId', message: 'not found' }]);
    await t.post('/v1/inventory/count-sessions', { facilityId: f.facility.id, extra: 1 }).expect(400);
  });

  it('cancels an open session; honours If-Match', async () => {
    const item = await newItem(t, f.uom('EA'));
    const s = await open();
    await t.post(`/v1/inventory/count-sessions/${s.id}/lines`).set('If-Match', '"7"').send({ lines: [{ itemId: item.id, locationId: f.location.id, countedQty: 1 }] }).expect(412);
    await t.post(`/v1/inventory/count-sessions/${s.id}/lines`).set('If-Match', '"1"').send({ lines: [{ itemId: item.id, locationId: f.location.id, countedQty: 1 }] }).expect(200);
    await t.post(`/v1/inventory/count-sessions/${s.id}/cancel`).set('If-Match', '"1"').expect(412);
    const cancelled = (await t.post(`/v1/inventory/count-sessions/${s.id}/cancel`).set('If-Match', '"2"').expect(200)).body.data;
    expect(cancelled).toMatchObject({ status: 'cancelled', version: 3, transactionId: null, completedAt: null });
    expect((await action(s.id, 'complete', 409)).body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('cancelled') });
    expect((await count(s.id, [{ itemId: item.id, locationId: f.location.id, countedQty: 1 }], 409)).body.message).toContain('cancelled');
    expect((await action(s.id, 'cancel', 409)).body.error).toBe('invalid_state');
    expect(await onHand(t, { itemId: item.id, locationId: f.location.id })).toBe(0);
  });

  it('lists newest first with filters and q; 404 for unknown, malformed and other tenants\' ids', async () => {
    const u = await newTenant(ctx);
    const g = await inventoryFixture(u);
    const h = await facilityWithLocations(u, 1);
    const mk = async (facilityId: string) => (await u.post('/v1/inventory/count-sessions', { facilityId }).expect(201)).body.data;
    const s1 = await mk(g.facility.id);
    const s2 = await mk(h.facility.id);
    const s3 = await mk(g.facility.id);
    await u.post(`/v1/inventory/count-sessions/${s2.id}/cancel`).expect(200);
    const all = (await u.get('/v1/inventory/count-sessions').expect(200)).body;
    expect(all).toMatchObject({ count: 3, limit: 50, offset: 0 });
    expect(all.data.map((x: { sessionNo: string }) => x.sessionNo)).toEqual(['CS-000003', 'CS-000002', 'CS-000001']);
    const ids = async (query: string) => (await u.get(`/v1/inventory/count-sessions?${query}`).expect(200)).body.data.map((x: { id: string }) => x.id);
    expect(await ids(`facilityId=${g.facility.id}`)).toEqual([s3.id, s1.id]);
    expect(await ids('status=cancelled')).toEqual([s2.id]);
    expect(await ids('status=open&q=cs-000003')).toEqual([s3.id]);
    expect(await ids('limit=2&offset=1')).toEqual([s2.id, s1.id]);

    await u.get(`/v1/inventory/count-sessions/${randomUUID()}`).expect(404);
    await u.get('/v1/inventory/count-sessions/nope').expect(404);
    await t.get(`/v1/inventory/count-sessions/${s1.id}`).expect(404);
    await t.post(`/v1/inventory/count-sessions/${s1.id}/complete`).expect(404);
    const reader = await newTenant(ctx, ['inventory:read']);
    await reader.post('/v1/inventory/count-sessions', { facilityId: g.facility.id }).expect(403);
  });
});
