import type * as LedgerModule from '../../src/inventory/ledger/ledger.service';
import type * as UowModule from '../../src/database/unit-of-work';
import type * as Verify from '../../src/inventory/ledger/verify.sql';
import type { Posting } from '../../src/inventory/ledger/posting';
import { fromDist, nativeRequire } from '../support/dist';
import { newTenant, startApp, Tenant, TestContext } from '../support/app';
import { adjust, inventoryFixture, newItem } from '../support/fixtures';

const { LedgerService } = fromDist<typeof LedgerModule>('inventory/ledger/ledger.service');
const { UnitOfWork } = fromDist<typeof UowModule>('database/unit-of-work');
const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');
const { ClsService } = nativeRequire('nestjs-cls') as { ClsService: new (...args: never[]) => { run<T>(f: () => T): T; set(k: string, v: unknown): void } };

/**
 * The ledger's one posting call, driven directly (no route builds such a posting yet; sales shipments
 * and work-order completions will): free lines and lines that consume holds, one transaction.
 */
describe('ledger posting that consumes holds', () => {
  let ctx: TestContext;
  const sql = (text: string, params?: unknown[]) => ctx.db.query(text, params);
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  /** Runs `work` with the LedgerService in a unit of work of the tenant, as a request would. */
  function inUnitOfWork<T>(t: Tenant, work: (ledger: InstanceType<typeof LedgerService>) => Promise<T>): Promise<T> {
    const cls = ctx.app.get(ClsService);
    const uow = ctx.app.get(UnitOfWork);
    const ledger = ctx.app.get(LedgerService);
    return cls.run(() => {
      cls.set('principal', { tenantId: t.tenantId, userId: 'ledger-spec', permissions: new Set() });
      return uow.run(() => work(ledger), t.tenantId);
    });
  }
  const post = (t: Tenant, posting: Posting) => inUnitOfWork(t, (ledger) => ledger.post(posting));

  async function ground() {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{}, {}] });
    const [a, b] = f.items;
    const [b1, b2] = f.locations;
    const free = await newItem(t, f.uom('EA'));
    await adjust(t, { itemId: a.id, locationId: b1.id, qtyDelta: 10 });
    await adjust(t, { itemId: a.id, locationId: b2.id, qtyDelta: 5 });
    await adjust(t, { itemId: b.id, locationId: b1.id, qtyDelta: 7 });
    // R1: 6 of A pinned 4 at B-1 and 2 at B-2; R2: 5 of B allocated automatically (B-1).
    const r1 = (await t.post('/v1/inventory/reservations', { itemId: a.id, facilityId: f.facility.id, qty: 6 }).expect(201)).body.data;
    await t.post(`/v1/inventory/reservations/${r1.id}/allocate`, { allocations: [{ locationId: b1.id, qty: 4 }, { locationId: b2.id, qty: 2 }] }).expect(200);
    const r2 = (await t.post('/v1/inventory/reservations', { itemId: b.id, facilityId: f.facility.id, qty: 5 }).expect(201)).body.data;
    await t.post(`/v1/inventory/reservations/${r2.id}/allocate`).expect(200);
    return { t, f, a, b, b1, b2, free, r1, r2 };
  }

  const balances = async (t: Tenant) =>
    Object.fromEntries(
      (await t.get('/v1/inventory/balances?limit=500').expect(200)).body.data.map((r: { itemId: string; locationId: string; qtyOnHand: number; qtyAllocated: number }) => [
        `${r.itemId}@${r.locationId}`,
        [r.qtyOnHand, r.qtyAllocated],
      ]),
    );

  it('posts one transaction that consumes two reservations and posts a free line, exactly', async () => {
    const { t, f, a, b, b1, b2, free, r1, r2 } = await ground();
    const txn = await post(t, {
      type: 'shipment',
      sourceType: 'test',
      lines: [{ reservationId: r1.id, qty: 5 }, { itemId: free.id, locationId: b2.id, qty: 3 }, { reservationId: r2.id }],
    });
    // R1's 5 come from its allocations in location-code order (4 at B-1, 1 at B-2); R2 issues all it holds.
    expect(txn.lines.map((l) => [l.lineNo, l.itemId, l.locationId, l.qtyDelta])).toEqual([
      [1, a.id, b1.id, -4],
      [2, a.id, b2.id, -1],
      [3, free.id, b2.id, 3],
      [4, b.id, b1.id, -5],
    ]);
    const all = (await t.get('/v1/inventory/transactions?type=shipment').expect(200)).body;
    expect(all.count).toBe(1);
    expect(all.data[0]).toMatchObject({ id: txn.id, txnNo: txn.txnNo, sourceType: 'test' });

    expect(await balances(t)).toEqual({
      [`${a.id}@${b1.id}`]: [6, 0],
      [`${a.id}@${b2.id}`]: [4, 1],
      [`${b.id}@${b1.id}`]: [2, 0],
      [`${free.id}@${b2.id}`]: [3, 0],
    });
    const read = async (id: string) => (await t.get(`/v1/inventory/reservations/${id}`).expect(200)).body.data;
    expect(await read(r1.id)).toMatchObject({ qty: 6, qtyAllocated: 1, qtyFulfilled: 5, status: 'allocated', version: 3, allocations: [expect.objectContaining({ locationId: b2.id, qty: 1 })] });
    expect(await read(r2.id)).toMatchObject({ qty: 5, qtyAllocated: 0, qtyFulfilled: 5, status: 'fulfilled', allocations: [] });
    const atp = (await t.get(`/v1/inventory/availability?itemId=${a.id}&groupBy=facility`).expect(200)).body.data[0];
    expect(atp).toMatchObject({ facilityId: f.facility.id, qtyOnHand: 10, qtyAllocated: 1, qtyReserved: 0, qtyAvailable: 9 });
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('posts nothing when one hold cannot cover its line, naming the line', async () => {
    const { t, a, b2, free, r1, r2 } = await ground();
    const before = await balances(t);
    const err = await post(t, {
      type: 'shipment',
      lines: [{ reservationId: r2.id }, { itemId: free.id, locationId: b2.id, qty: 3 }, { reservationId: r1.id, qty: 7, field: 'lines[2]' }],
    }).then(() => undefined, (e: { status: number; code: string; details: unknown[] }) => e);
    expect(err).toMatchObject({ status: 409, code: 'insufficient_stock', details: [expect.objectContaining({ field: 'lines[2].qty', itemId: a.id, requested: 7, available: 6 })] });
    expect(await balances(t)).toEqual(before);
    expect((await t.get('/v1/inventory/transactions?type=shipment').expect(200)).body.count).toBe(0);
    expect((await t.get(`/v1/inventory/reservations/${r2.id}`).expect(200)).body.data).toMatchObject({ status: 'allocated', qtyFulfilled: 0 });
    // A reservation that does not exist (or is another tenant's) is an unknown reference: 404 naming the line.
    const unknown = await post(t, { type: 'shipment', lines: [{ reservationId: '00000000-0000-4000-8000-000000000000', field: 'lines[0]' }] }).then(() => undefined, (e) => e);
    expect(unknown).toMatchObject({ status: 404, code: 'not_found', details: [expect.objectContaining({ field: 'lines[0].reservationId' })] });
    // Issuing from a place the hold has nothing at is refused the same way.
    const elsewhere = await post(t, { type: 'shipment', lines: [{ reservationId: r2.id, locationId: b2.id, qty: 1 }] }).then(() => undefined, (e) => e);
    expect(elsewhere).toMatchObject({ status: 409, code: 'insufficient_stock' });
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('closes a partly issued reservation: fulfilled for what it issued, the rest freed', async () => {
    const { t, f, a, r1 } = await ground();
    const closed = await inUnitOfWork(t, async (ledger) => {
      await ledger.post({ type: 'production', lines: [{ reservationId: r1.id, qty: 2 }] });
      return ledger.closeReservation(r1.id);
    });
    expect(closed).toMatchObject({ status: 'fulfilled', qty: 6, qtyFulfilled: 2, qtyAllocated: 0, allocations: [] });
    const atp = (await t.get(`/v1/inventory/availability?itemId=${a.id}&groupBy=facility`).expect(200)).body.data[0];
    expect(atp).toMatchObject({ facilityId: f.facility.id, qtyOnHand: 13, qtyAllocated: 0, qtyReserved: 0, qtyAvailable: 13 });
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('a unit of work that catches a failed ledger step and carries on still commits nothing', async () => {
    const { t, a, b1, b2, r1 } = await ground();
    const before = await balances(t);
    const outcome = await inUnitOfWork(t, async (ledger) => {
      await ledger.post({ type: 'adjustment', lines: [{ itemId: a.id, locationId: b1.id, qty: 1 }] });
      // Fails after the issue lines were planned and locked; the caller swallows the error.
      await ledger.post({ type: 'shipment', lines: [{ itemId: a.id, locationId: b2.id, qty: -1 }, { reservationId: r1.id, qty: 99 }] }).catch(() => undefined);
      return 'carried on';
    }).then(() => undefined, (e: unknown) => e);
    expect(outcome).toMatchObject({ status: 409, code: 'insufficient_stock' });
    expect(await balances(t)).toEqual(before);
    expect((await t.get('/v1/inventory/transactions?limit=500').expect(200)).body.count).toBe(3);
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('issues named serials from the allocation where each one is', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{ serialTracking: 'required' }] });
    const [b1, b2] = f.locations;
    await adjust(t, { itemId: f.item.id, locationId: b1.id, qtyDelta: 2, serialNos: ['S1', 'S2'] });
    await adjust(t, { itemId: f.item.id, locationId: b2.id, qtyDelta: 2, serialNos: ['S3', 'S4'] });
    const r = (await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 4 }).expect(201)).body.data;
    await t.post(`/v1/inventory/reservations/${r.id}/allocate`).expect(200);
    // S3 is at B-2, S1 at B-1: each comes from its own allocation, whatever the order given.
    const txn = await post(t, { type: 'shipment', lines: [{ reservationId: r.id, qty: 2, serialNos: ['S3', 'S1'] }] });
    expect(txn.lines.map((l) => [l.locationId, l.qtyDelta, l.serialNos]).sort()).toEqual([[b1.id, -1, ['S1']], [b2.id, -1, ['S3']]].sort());
    const inStock = (await t.get(`/v1/inventory/serials?itemId=${f.item.id}&inStock=true`).expect(200)).body.data.map((s: { serialNo: string }) => s.serialNo);
    expect(inStock).toEqual(['S2', 'S4']);
    const refused = async (serialNos: string[], qty?: number) =>
      post(t, { type: 'shipment', lines: [{ reservationId: r.id, qty, serialNos, field: 'lines[0]' }] }).then(() => undefined, (e) => e);
    expect(await refused(['S2', 'S9'])).toMatchObject({ status: 400, details: [expect.objectContaining({ field: 'lines[0].serialNos', message: expect.stringContaining('S9') })] });
    expect(await refused(['S2', 'S4'], 1)).toMatchObject({ status: 400, details: [expect.objectContaining({ field: 'lines[0].serialNos' })] });
    expect(await refused(['S1'])).toMatchObject({ status: 400 }); // already shipped
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });
});
