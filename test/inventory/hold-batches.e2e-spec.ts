import { Client } from 'pg';
import type * as Verify from '../../src/inventory/ledger/verify.sql';
import { fromDist } from '../support/dist';
import { ALL, newTenant, startApp, Tenant, TestContext, testDatabaseUrl } from '../support/app';
import { adjust, inventoryFixture } from '../support/fixtures';
import { batchMembers, batchWaiting, blockedBehind, expectNumbersGapFree } from '../support/locks';

const { verifyLedger } = fromDist<typeof Verify>('inventory/ledger/verify.sql');

const R = '/v1/inventory/reservations';
const WAITING = 'ledger_reservation_batch_waiting';

/**
 * New reservations the direct way (DirectHolds): one statement, and a tenant's reservations that arrive
 * while another of its own is in flight share one transaction, one range of RS numbers and one COMMIT
 * (PostingBatches). Proven with parallel requests against the listening service and checked in the
 * database: batches did form (several reservations with one inserting transaction id, `xmin`), every 201 is
 * exactly one reservation with the number it answered, numbers stay gap-free and unique, available-to-
 * promise is never exceeded, and a hold that cannot be written in a batch changes nothing of the others.
 */
describe('batches of new reservations', () => {
  let ctx: TestContext;
  const sql = (text: string, params?: unknown[]) => ctx.db.query(text, params);

  // The expiry job stays out of the way: only a reservation's own path releases what lapsed.
  beforeAll(async () => {
    ctx = await startApp({ DB_POOL_SIZE: '30', RESERVATION_EXPIRY_INTERVAL_SECONDS: '3600' });
  });
  afterAll(() => ctx.close());



  /** Each 201 has exactly one reservation.created event, its data the answer (also when its batch fell back and it ran again). */
  async function expectOneEventEach(tenantId: string, answers: Array<{ status: number; body: { data: { id: string } } }>) {
    const created = answers.filter((a) => a.status === 201);
    const events: Array<{ subject_id: string; data: unknown }> = await sql(
      `SELECT subject_id, data FROM events WHERE tenant_id = $1 AND type = 'reservation.created' AND subject_id = ANY($2::uuid[])`, [tenantId, created.map((a) => a.body.data.id)]);
    expect(events).toHaveLength(created.length);
    for (const a of created) expect(events.find((e) => e.subject_id === a.body.data.id)!.data).toEqual(a.body.data);
  }

  async function reserved(tenantId: string, itemId: string): Promise<number> {
    const [row] = await sql(`SELECT qty_reserved::float AS q FROM inventory_positions WHERE tenant_id = $1 AND item_id = $2`, [tenantId, itemId]);
    return row.q;
  }

  /** A tenant with stock of `items` items at one facility, and one reservation of each made (the full way: it learns the facts). */
  async function stocked(qty: number, items = 1) {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: Array.from({ length: items }, () => ({})) });
    for (const item of f.items) {
      await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: qty });
      await t.post(R, { itemId: item.id, facilityId: f.facility.id, qty: 1, notes: 'first' }).expect(201);
    }
    return { t, f, hold: (i: number, qtyHeld: number, notes: string) => ({ itemId: f.items[i].id, facilityId: f.facility.id, qty: qtyHeld, notes }) };
  }

  it('parallel reservations share transactions; each 201 is one reservation with its own number and answer', async () => {
    const { t, f, hold } = await stocked(1000, 3);
    const before = await batchMembers(ctx.app, 'ledger_reservation_batch_members_total');
    const wanted = Array.from({ length: 90 }, (_, i) => hold(i % 3, 1 + (i % 4), 'batch'));
    const answers = await Promise.all(wanted.map((h) => t.post(R, h)));
    expect(answers.map((a) => a.status)).toEqual(wanted.map(() => 201));

    const rows: Array<{ id: string; reservation_no: string; xid: string; qty: number; status: string }> = await sql(
      `SELECT id, reservation_no, xmin::text AS xid, qty::float AS qty, status FROM reservations WHERE tenant_id = $1 AND notes = 'batch'`,
      [t.tenantId],
    );
    expect(rows).toHaveLength(90);
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const [i, a] of answers.entries()) {
      expect(a.body.data).toMatchObject({ qty: wanted[i].qty, status: 'open', itemId: wanted[i].itemId, allocations: [] });
      expect(byId.get(a.body.data.id)).toMatchObject({ reservation_no: a.body.data.reservationNo, qty: wanted[i].qty, status: 'open' });
    }
    // batches formed: fewer database transactions than reservations, each with one range of numbers
    const xids = new Set(rows.map((r) => r.xid));
    expect(xids.size).toBeLessThan(90);
    expect((await batchMembers(ctx.app, 'ledger_reservation_batch_members_total')).written - before.written).toBeGreaterThan(0);
    for (const xid of xids) {
      const nos = rows.filter((r) => r.xid === xid).map((r) => Number(r.reservation_no.slice(3))).sort((a, b) => a - b);
      expect(nos[nos.length - 1] - nos[0]).toBe(nos.length - 1);
    }
    // each reservation's reservation.created event, once, is its answer
    const events: Array<{ subject_id: string; action: string; data: unknown }> = await sql(
      `SELECT subject_id, action, data FROM events WHERE tenant_id = $1 AND type = 'reservation.created' AND data->>'notes' = 'batch'`, [t.tenantId]);
    expect(events).toHaveLength(90);
    for (const a of answers) expect(events.filter((e) => e.subject_id === a.body.data.id)).toEqual([{ subject_id: a.body.data.id, action: 'create', data: a.body.data }]);
    await expectNumbersGapFree(sql, t.tenantId, 'RS');
    for (const [i, item] of f.items.entries()) {
      expect(await reserved(t.tenantId, item.id)).toBe(1 + wanted.filter((h) => h.itemId === f.items[i].id).reduce((s, h) => s + h.qty, 0));
    }
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('never promises more than is available: of 40 parallel holds on 10 units, exactly 9 more are granted', async () => {
    const { t, f, hold } = await stocked(10);
    const answers = await Promise.all(Array.from({ length: 40 }, () => t.post(R, hold(0, 1, 'race'))));
    const granted = answers.filter((a) => a.status === 201);
    expect(granted).toHaveLength(9);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(409);
      expect(a.body).toMatchObject({ error: 'insufficient_stock', details: [expect.objectContaining({ itemId: f.item.id, requested: 1, available: 0 })] });
    }
    const [{ n }] = await sql(`SELECT count(*)::int AS n FROM reservations WHERE tenant_id = $1 AND notes = 'race'`, [t.tenantId]);
    expect(n).toBe(9);
    await expectOneEventEach(t.tenantId, answers);
    expect(await reserved(t.tenantId, f.item.id)).toBe(10);
    await expectNumbersGapFree(sql, t.tenantId, 'RS');
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('a hold that cannot be written sends its batch the full way: it gets its own 409, the others are reserved once each', async () => {
    const { t, f, hold } = await stocked(10, 2);
    const before = await batchMembers(ctx.app, 'ledger_reservation_batch_members_total');
    // Hold the tenant's RS number row: the first reservation (the leader) waits on it with its statement
    // sent; the next five queue for the tenant's next batch.
    const holder = new Client({ connectionString: testDatabaseUrl() });
    await holder.connect();
    let answers;
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM document_sequences WHERE tenant_id = $1 AND prefix = 'RS' FOR UPDATE`, [t.tenantId]);
      const [{ pid }] = (await holder.query('SELECT pg_backend_pid() AS pid')).rows;
      const leader = Promise.resolve(t.post(R, hold(1, 1, 'leader')));
      expect(await blockedBehind(sql, pid, 1)).toBeGreaterThanOrEqual(1);
      const members = [hold(1, 1, 'member'), hold(1, 1, 'member'), hold(0, 50, 'member'), hold(1, 1, 'member'), hold(1, 2, 'member')];
      const queued = members.map((m) => Promise.resolve(t.post(R, m)));
      await batchWaiting(ctx.app, members.length, 20_000, WAITING);
      await holder.query('COMMIT');
      expect((await leader).status).toBe(201);
      answers = await Promise.all(queued);
    } finally {
      await holder.end();
    }
    expect(answers.map((a) => a.status)).toEqual([201, 201, 409, 201, 201]);
    expect(answers[2].body).toMatchObject({ error: 'insufficient_stock', details: [expect.objectContaining({ requested: 50, available: 9 })] });
    // the five went as one batch, which fell back whole; then each was reserved (or refused) on its own
    expect((await batchMembers(ctx.app, 'ledger_reservation_batch_members_total')).fellBack - before.fellBack).toBe(5);
    const rows: Array<{ id: string }> = await sql(`SELECT id FROM reservations WHERE tenant_id = $1 AND notes = 'member'`, [t.tenantId]);
    expect(rows.map((r) => r.id).sort()).toEqual(answers.filter((a) => a.status === 201).map((a) => a.body.data.id).sort());
    await expectOneEventEach(t.tenantId, answers);
    expect(await reserved(t.tenantId, f.items[0].id)).toBe(1);
    expect(await reserved(t.tenantId, f.items[1].id)).toBe(7);
    await expectNumbersGapFree(sql, t.tenantId, 'RS');
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('goes the full way when what it remembered changed or an expired hold is in the way', async () => {
    const { t, f, hold } = await stocked(10, 2);
    // An item deactivated since: refused with the full way's answer, nothing reserved.
    await t.patch(`/v1/items/${f.items[1].id}`, { isActive: false }).expect(200);
    const refused = await t.post(R, hold(1, 1, 'inactive')).expect(409);
    expect(refused.body).toMatchObject({ error: 'invalid_state', message: expect.stringContaining('inactive') });
    expect(await reserved(t.tenantId, f.items[1].id)).toBe(1);

    // A hold that expired at the position (the expiry job has not run) is released by the new reservation's
    // path (there is enough to promise without it: only the expired hold stands in the direct way).
    const short = (await t.post(R, { ...hold(0, 2, 'expiring'), expiresAt: new Date(Date.now() + 3_600_000).toISOString() }).expect(201)).body.data;
    await sql(`UPDATE reservations SET expires_at = now() - interval '1 second' WHERE tenant_id = $1 AND id = $2`, [t.tenantId, short.id]);
    const next = await t.post(R, hold(0, 3, 'after')).expect(201);
    await expectOneEventEach(t.tenantId, [next]);
    expect(next.body.data).toMatchObject({ qty: 3, status: 'open' });
    const [row] = await sql(`SELECT status FROM reservations WHERE tenant_id = $1 AND id = $2`, [t.tenantId, short.id]);
    expect(row.status).toBe('released');
    const [{ n }] = await sql(`SELECT count(*)::int AS n FROM events WHERE tenant_id = $1 AND type = 'reservation.updated' AND action = 'expire' AND subject_id = $2`, [t.tenantId, short.id]);
    expect(n).toBe(1);
    expect(await reserved(t.tenantId, f.items[0].id)).toBe(4);
    await expectNumbersGapFree(sql, t.tenantId, 'RS');
    expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
  });

  it('with an Idempotency-Key: reserved once, its event written once, the replay the same answer', async () => {
    const { t, hold } = await stocked(10);
    const key = `hold-${Date.now()}`;
    const first = await t.post(R, hold(0, 2, 'keyed')).set('Idempotency-Key', key).expect(201);
    const again = await t.post(R, hold(0, 2, 'keyed')).set('Idempotency-Key', key).expect(201);
    expect(again.body).toEqual(first.body);
    const events: Array<{ data: unknown }> = await sql(`SELECT data FROM events WHERE tenant_id = $1 AND type = 'reservation.created' AND subject_id = $2`, [t.tenantId, first.body.data.id]);
    expect(events).toEqual([{ data: first.body.data }]);
    const [{ n }] = await sql(`SELECT count(*)::int AS n FROM reservations WHERE tenant_id = $1 AND notes = 'keyed'`, [t.tenantId]);
    expect(n).toBe(1);
    await expectNumbersGapFree(sql, t.tenantId, 'RS');
  });

  it("a process's first reservations of items it has never reserved go the direct way too, and share transactions", async () => {
    // Stocked through this app; a second process knows none of the items' and facility's facts: it learns
    // each with a read of its own, then the reservation joins its tenant's batch.
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: Array.from({ length: 30 }, () => ({})) });
    for (const item of f.items) await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: 10 });
    const cold = await startApp({ DB_POOL_SIZE: '30', RESERVATION_EXPIRY_INTERVAL_SECONDS: '3600' });
    try {
      const there = await newTenant(cold, ALL, t.tenantId);
      const before = await batchMembers(cold.app, 'ledger_reservation_batch_members_total');
      const answers = await Promise.all(f.items.map((item) => there.post(R, { itemId: item.id, facilityId: f.facility.id, qty: 3, notes: 'cold' })));
      expect(answers.map((a) => a.status)).toEqual(f.items.map(() => 201));
      const after = await batchMembers(cold.app, 'ledger_reservation_batch_members_total');
      const [row] = await sql(`SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS xids FROM reservations WHERE tenant_id = $1 AND notes = 'cold'`, [t.tenantId]);
      expect(row.n).toBe(30);
      expect(row.xids).toBeLessThan(30);
      expect(after.written - before.written).toBeGreaterThan(0);
      expect(after.fellBack - before.fellBack).toBe(0);
      for (const item of f.items) expect(await reserved(t.tenantId, item.id)).toBe(3);
      await expectNumbersGapFree(sql, t.tenantId, 'RS');
      expect(await verifyLedger(sql, t.tenantId)).toEqual([]);
    } finally {
      await cold.close();
    }
  });

  it('with LEDGER_BATCHES=false each reservation is its own transaction', async () => {
    const alone = await startApp({ DB_POOL_SIZE: '30', LEDGER_BATCHES: 'false' });
    try {
      const t: Tenant = await newTenant(alone);
      const f = await inventoryFixture(t);
      await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 100 });
      // the first looks the item and facility up: the thirty may take the direct way, each alone
      await t.post(R, { itemId: f.item.id, facilityId: f.facility.id, qty: 1, notes: 'first' }).expect(201);
      await Promise.all(Array.from({ length: 30 }, () => t.post(R, { itemId: f.item.id, facilityId: f.facility.id, qty: 1, notes: 'alone' }).expect(201)));
      const [row] = await sql(`SELECT count(*)::int AS n, count(DISTINCT xmin::text)::int AS xids FROM reservations WHERE tenant_id = $1 AND notes = 'alone'`, [t.tenantId]);
      expect(row).toEqual({ n: 30, xids: 30 });
      await expectNumbersGapFree(sql, t.tenantId, 'RS');
    } finally {
      await alone.close();
    }
  });
});
