import { randomUUID } from 'node:crypto';
import type * as EventsDtoModule from '../../src/events/events.dto';
import type * as RetentionModule from '../../src/events/retention-job';
import type * as ExpiryJobModule from '../../src/inventory/ledger/expiry-job';
import { fromDist, nativeRequire } from '../support/dist';
import { ALL, newTenant, startApp, Tenant, TestContext, testDatabaseUrl } from '../support/app';
import { adjust, inventoryFixture, lapseReservations, tenantWithStock } from '../support/fixtures';
import { Db, drainFeed, FeedEvent, feedCaughtUp, untilFeedCaughtUp } from '../support/feed';
import { ISO_MS, UUID } from '../support/matchers';

type PgClient = { connect(): Promise<void>; query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>; end(): Promise<void> };
const { Client } = nativeRequire('pg') as { Client: new (o: { connectionString: string }) => PgClient };
const { EventRetentionJob } = fromDist<typeof RetentionModule>('events/retention-job');
const { ExpiryJob } = fromDist<typeof ExpiryJobModule>('inventory/ledger/expiry-job');
const { FEED_SCAN } = fromDist<typeof EventsDtoModule>('events/events.dto');

interface FeedPage {
  data: FeedEvent[];
  nextCursor: string;
  limit: number;
}

const page = async (t: Tenant, query = ''): Promise<FeedPage> => (await t.get(`/v1/events${query ? `?${query}` : ''}`).expect(200)).body;

/** The superuser's connection (set in beforeAll): to see when the feed has caught up. */
let db: Db;

/** Whether every event of `t` written so far is below the feed's horizon (the feed can hand it out). */
const caughtUp = (t: Tenant) => feedCaughtUp(db, t.tenantId);

/** Every event after `after`, once the feed has caught up with the tenant (never while this spec holds a transaction open: use `page` then). */
const drain = (t: Tenant, after?: string, limit?: number) => drainFeed(db, t, after, limit);

/** Ages the given events of `t` past EVENT_RETENTION_DAYS (30) and runs the retention job, as its hourly run would. */
async function prune(ctx: TestContext, t: Tenant, events: FeedEvent[]): Promise<void> {
  await ctx.db.query(`UPDATE events SET occurred_at = occurred_at - interval '31 days' WHERE tenant_id = $1 AND id = ANY($2::uuid[])`, [t.tenantId, events.map((e) => e.id)]);
  expect(await ctx.app.get(EventRetentionJob).runOnce()).toBeGreaterThanOrEqual(events.length);
}

/** The feed position (txid, seq) of the `n`th event (1-based) of `t` in feed order, as a cursor encodes it. */
async function positionOf(t: Tenant, n: number): Promise<string> {
  const [row] = await db.query(`SELECT txid::text || '.' || seq::text AS p FROM events WHERE tenant_id = $1 ORDER BY txid, seq OFFSET $2 LIMIT 1`, [t.tenantId, n - 1]);
  return row.p as string;
}

const positionIn = (cursor: string) => Buffer.from(cursor.slice('ev1_'.length), 'base64url').toString();

/**
 * A resource event written from outside the service, through the same INSERT the service uses, in a
 * transaction this spec holds open (as a slow request would).
 */
async function heldEvent(tenantId: string, subjectId = randomUUID()): Promise<{ client: PgClient; subjectId: string }> {
  const client = new Client({ connectionString: testDatabaseUrl() });
  await client.connect();
  await client.query('BEGIN');
  await client.query('SET LOCAL ROLE inventory_app');
  await client.query(`SELECT set_config('app.tenant_id', $1, true)`, [tenantId]);
  await client.query(
    `INSERT INTO events (tenant_id, type, action, subject_type, subject_id, data) VALUES ($1, 'item.updated', 'patch', 'item', $2, $3::jsonb)`,
    [tenantId, subjectId, JSON.stringify({ id: subjectId, held: true })],
  );
  return { client, subjectId };
}

describe('the event feed', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
    db = ctx.db;
  });
  afterAll(() => ctx.close());

  it('an adjustment writes transaction.posted (the transaction as its GET returns it) and stock.changed (quantities after the change)', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const { cursor } = await drain(t);
    const posted = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 7 })).body.data;
    const second = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: -2 })).body.data;
    const { events } = await drain(t, cursor);
    expect(events.map((e) => e.type)).toEqual(['transaction.posted', 'stock.changed', 'transaction.posted', 'stock.changed']);
    const [tx, stock, , stock2] = events;
    expect(tx).toEqual({ id: expect.stringMatching(UUID), type: 'transaction.posted', occurredAt: expect.stringMatching(ISO_MS), action: 'adjustment', subject: { type: 'transaction', id: posted.id }, data: posted });
    expect(tx.data).toEqual((await t.get(`/v1/inventory/transactions/${posted.id}`).expect(200)).body.data);
    expect(stock).toMatchObject({ type: 'stock.changed', action: 'adjustment', subject: { type: 'item', id: f.item.id } });
    expect(stock.data).toEqual({
      itemId: f.item.id, facilityId: f.facility.id, locationId: f.location.id, lotId: null, statusId: f.status('AVAILABLE'),
      qtyDelta: 7, qtyOnHand: 7, qtyAllocated: 0, transactionId: posted.id, txnNo: posted.txnNo, transactionType: 'adjustment',
    });
    expect(stock2.data).toMatchObject({ qtyDelta: -2, qtyOnHand: 5, transactionId: second.id });
  });

  it('event ids are time-ordered (UUID version 7): later events have later ids', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const { cursor } = await drain(t);
    const from = Date.now();
    for (let i = 1; i <= 3; i++) await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: i });
    const { events } = await drain(t, cursor);
    expect(events).toHaveLength(6);
    // The version nibble, then the first 48 bits: Unix time in milliseconds, when the event was written.
    expect(events.map((e) => e.id[14])).toEqual(events.map(() => '7'));
    const ms = events.map((e) => parseInt(e.id.replace(/-/g, '').slice(0, 12), 16));
    for (const [i, m] of ms.entries()) {
      expect(m).toBeGreaterThanOrEqual(from - 1000); // the database's clock, the same machine's
      expect(m).toBeLessThanOrEqual(Date.now() + 1000);
      if (i > 0) expect(m).toBeGreaterThanOrEqual(ms[i - 1]);
    }
  });

  it('the full posting way (a lot) writes the same events; a refused request writes none', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t, { items: [{ lotTracking: 'required' }] });
    const { cursor } = await drain(t);
    const posted = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 4, lotNo: 'L1' })).body.data;
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: -9, lotNo: 'L1' }, 409);
    await t.post('/v1/items', { itemNo: '', name: '' }).expect(400);
    const { events } = await drain(t, cursor);
    expect(events.map((e) => e.type)).toEqual(['transaction.posted', 'stock.changed']);
    expect(events[0].data).toEqual((await t.get(`/v1/inventory/transactions/${posted.id}`).expect(200)).body.data);
    expect(events[1].data).toMatchObject({ lotId: posted.lines[0].lotId, qtyDelta: 4, qtyOnHand: 4, qtyAllocated: 0 });
  });

  it('pages: limit, nextCursor always a string, an empty page at the end, types exact and prefix', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    for (let i = 1; i <= 3; i++) await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: i });
    const all = await drain(t);
    const first = await page(t, 'limit=2');
    expect(first).toEqual({ data: all.events.slice(0, 2), nextCursor: expect.any(String), limit: 2 });
    expect((await page(t, `limit=3&after=${first.nextCursor}`)).data).toEqual(all.events.slice(2, 5));
    const end = await page(t, `after=${all.cursor}`);
    expect(end).toEqual({ data: [], nextCursor: all.cursor, limit: 100 });
    const stock = await page(t, 'types=stock.changed');
    expect(stock.data.map((e) => e.data.qtyOnHand)).toEqual([1, 3, 6]);
    const created = await page(t, 'types=item.*,facility.*');
    expect(created.data.map((e) => e.type)).toEqual(['facility.created', 'item.created']);
    expect(new Set(all.events.map((e) => e.type))).toEqual(new Set(['facility.created', 'location.created', 'item.created', 'transaction.posted', 'stock.changed']));
  });

  it('rejects a bad cursor, bad types and limits with 400 naming the field', async () => {
    const t = await newTenant(ctx);
    for (const [q, field] of [
      ['after=nope', 'after'], [`after=ev1_${Buffer.from('1.x').toString('base64url')}`, 'after'], [`after=ev1_${Buffer.from('99999999999999999999.1').toString('base64url')}`, 'after'],
      ['types=stock', 'types'], ['types=Stock.changed', 'types'], [`types=${Array.from({ length: 21 }, (_, i) => `t${'x'.repeat(i)}.a`).join(',')}`, 'types'],
      ['limit=0', 'limit'], ['limit=501', 'limit'], ['limit=abc', 'limit'],
    ]) {
      const res = await t.get(`/v1/events?${q}`).expect(400);
      expect(res.body).toMatchObject({ error: 'validation_failed', status: 400 });
      expect(res.body.details.map((d: { field: string }) => d.field)).toContain(field);
    }
  });

  it('needs events:read, and each tenant sees only its own events', async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    await inventoryFixture(a);
    const other = await newTenant(ctx, ALL.filter((p) => p !== 'events:read'));
    await other.get('/v1/events').expect(403);
    // Once the feed has caught up with a's writes (other specs' transactions hold its horizon back meanwhile).
    const { events, cursor } = await drain(a);
    expect(events.length).toBeGreaterThan(0);
    expect((await page(b)).data).toEqual([]);
    // A cursor of another tenant reads that tenant's position in this tenant's feed: nothing of the other's.
    expect((await page(b, `after=${cursor}`)).data).toEqual([]);
  });

  it('never passes an event that commits later: a held transaction holds the feed back, and its events come next once it commits', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1 });
    const before = await drain(t);

    // T1 writes its event and stays open; T2 and T3 (adjustments) commit after it.
    const held = await heldEvent(t.tenantId);
    try {
      const t2 = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2 })).body.data;
      const t3 = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 3 })).body.data;
      // Read while T1 is open: neither T1 (not committed) nor what committed after it began is handed out, so
      // the cursor cannot pass T1.
      const during = await page(t, `after=${before.cursor}`);
      expect(during.data).toEqual([]);
      expect(during.nextCursor).toBe(before.cursor);

      await held.client.query('COMMIT');
      const after = await drain(t, during.nextCursor);
      expect(after.events.map((e) => [e.type, e.subject.id])).toEqual([
        ['item.updated', held.subjectId],
        ['transaction.posted', t2.id],
        ['stock.changed', f.item.id],
        ['transaction.posted', t3.id],
        ['stock.changed', f.item.id],
      ]);
    } finally {
      await held.client.end().catch(() => undefined);
    }
  });

  it('a held transaction that rolls back leaves no event, and the feed goes on', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const before = await drain(t);
    const held = await heldEvent(t.tenantId);
    try {
      const t2 = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2 })).body.data;
      expect((await page(t, `after=${before.cursor}`)).data).toEqual([]);
      await held.client.query('ROLLBACK');
      expect((await drain(t, before.cursor)).events.map((e) => e.subject.id)).toEqual([t2.id, f.item.id]);
    } finally {
      await held.client.end().catch(() => undefined);
    }
  });

  it('the stall is bounded by idle_in_transaction_session_timeout: an idle held transaction is ended and the feed moves on', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const before = await drain(t);
    const client = new Client({ connectionString: testDatabaseUrl() });
    await client.connect();
    (client as unknown as { on(e: string, f: () => void): void }).on('error', () => undefined);
    try {
      await client.query('SET idle_in_transaction_session_timeout = 1000');
      await client.query('BEGIN');
      await client.query('SELECT pg_current_xact_id()');
      const t2 = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2 })).body.data;
      expect((await page(t, `after=${before.cursor}`)).data).toEqual([]);
      await new Promise((r) => setTimeout(r, 1500));
      expect((await drain(t, before.cursor)).events.map((e) => e.subject.id)).toEqual([t2.id, f.item.id]);
    } finally {
      await client.end().catch(() => undefined);
    }
  });

  it('under load: a reader polling during 200 parallel adjustments misses none and repeats none', async () => {
    const f = await tenantWithStock(ctx, { qty: 1000, items: [{}, {}] });
    const t = f.t;
    const start = await drain(t);
    let done = false;
    const seen: FeedEvent[] = [];
    const reader = (async () => {
      let cursor = start.cursor;
      for (;;) {
        // Done once the writers are, every event they wrote is below the horizon (checked before the page is
        // read: the page's own horizon is then at least as far), and a page comes back empty.
        const finished = done && (await caughtUp(t));
        const p = await page(t, `limit=37&after=${cursor}`);
        seen.push(...p.data);
        cursor = p.nextCursor;
        if (finished && !p.data.length) return;
      }
    })();
    const posted = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        adjust(t, { itemId: f.items[i % 2].id, locationId: f.location.id, qtyDelta: i % 3 === 0 ? -1 : 1 }).then((r) => r.body.data.id as string),
      ),
    );
    done = true;
    await reader;
    const txIds = seen.filter((e) => e.type === 'transaction.posted').map((e) => e.subject.id);
    expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
    expect(txIds.sort()).toEqual([...posted].sort());
    // Compared with the ledger: every transaction after the start, each with its stock.changed.
    const ledger = (await ctx.db.query(`SELECT id FROM ledger_transactions WHERE tenant_id = $1 AND posted_at >= (SELECT min(posted_at) FROM ledger_transactions WHERE id = ANY($2::uuid[]))`, [t.tenantId, posted])) as Array<{ id: string }>;
    expect(ledger.map((r) => r.id).sort()).toEqual([...posted].sort());
    expect(seen.filter((e) => e.type === 'stock.changed').length).toBe(200);
    // Per item, the last stock.changed in feed order carries the balance as it is now.
    for (const item of f.items) {
      const last = seen.filter((e) => e.type === 'stock.changed' && e.subject.id === item.id).pop()!;
      const balance = (await t.get(`/v1/inventory/balances?itemId=${item.id}&locationId=${f.location.id}`).expect(200)).body.data[0];
      expect(last.data.qtyOnHand).toBe(balance.qtyOnHand);
    }
  });

  it('the reservation expiry job writes reservation.updated (action expire) with the reservation as its GET returns it', async () => {
    const f = await tenantWithStock(ctx, { qty: 10 });
    const t = f.t;
    const r = (await t.post('/v1/inventory/reservations', { itemId: f.item.id, facilityId: f.facility.id, qty: 2, expiresAt: new Date(Date.now() + 3_600_000).toISOString() }).expect(201)).body.data;
    await t.post(`/v1/inventory/reservations/${r.id}/allocate`, { allocations: [{ locationId: f.location.id, qty: 2 }] }).expect(200);
    const { cursor } = await drain(t);
    expect(await lapseReservations(ctx.db, [r.id])).toBe(1);
    expect(await ctx.app.get(ExpiryJob).runOnce()).toBeGreaterThanOrEqual(1);
    const { events } = await drain(t, cursor);
    expect(events.map((e) => [e.type, e.action, e.subject])).toEqual([['reservation.updated', 'expire', { type: 'reservation', id: r.id }]]);
    expect(events[0].data).toEqual((await t.get(`/v1/inventory/reservations/${r.id}`).expect(200)).body.data);
  });

  it('a filtered page moves its cursor past the events it read that did not match', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const start = await drain(t);
    for (let i = 1; i <= 3; i++) await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: i });
    const all = await drain(t, start.cursor);
    expect(all.events.map((e) => e.type)).toEqual(Array.from({ length: 3 }, () => ['transaction.posted', 'stock.changed']).flat());
    // Nothing matches: the next poll starts after what this one read, not from the same place again.
    expect(await page(t, `types=work_order.*&after=${start.cursor}`)).toEqual({ data: [], nextCursor: all.cursor, limit: 100 });
    // A full page ends at its last event (the rest is not passed over); the next one reads on from there.
    const first = await page(t, `types=stock.changed&limit=2&after=${start.cursor}`);
    expect(first.data).toEqual([all.events[1], all.events[3]]);
    expect(await page(t, `types=stock.changed&limit=2&after=${first.nextCursor}`)).toEqual({ data: [all.events[5]], nextCursor: all.cursor, limit: 2 });
  });

  it(`a filtered page reads at most ${FEED_SCAN} events of the feed; polling on reaches what matches beyond them`, async () => {
    const t = await newTenant(ctx);
    const start = await drain(t);
    await ctx.db.query(
      `INSERT INTO events (tenant_id, type, action, subject_type, subject_id, data)
       SELECT $1, 'item.updated', 'patch', 'item', gen_random_uuid(), '{}'::jsonb FROM generate_series(1, $2::int)`,
      [t.tenantId, FEED_SCAN + 100],
    );
    const wanted = randomUUID();
    await ctx.db.query(`INSERT INTO events (tenant_id, type, action, subject_type, subject_id, data) VALUES ($1, 'work_order.updated', 'patch', 'work_order', $2, '{}'::jsonb)`, [t.tenantId, wanted]);
    await untilFeedCaughtUp(db, t.tenantId);
    const first = await page(t, `types=work_order.*&after=${start.cursor}`);
    expect(first.data).toEqual([]);
    expect(positionIn(first.nextCursor)).toBe(await positionOf(t, FEED_SCAN));
    const second = await page(t, `types=work_order.*&after=${first.nextCursor}`);
    expect(second.data.map((e) => e.subject.id)).toEqual([wanted]);
    expect(positionIn(second.nextCursor)).toBe(await positionOf(t, FEED_SCAN + 101));
  });

  it('retention: a read from the start after events were deleted hands back a cursor that polls on (no 410), with or without types', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1 });
    await prune(ctx, t, (await drain(t)).events);
    // Nothing is kept: from the start, an empty page with or without a filter that matches nothing.
    const filtered = await page(t, 'types=work_order.*');
    const bare = await page(t);
    expect([filtered.data, bare.data]).toEqual([[], []]);
    for (const cursor of [filtered.nextCursor, bare.nextCursor]) {
      const again = await page(t, `types=work_order.*&after=${cursor}`);
      expect(again.data).toEqual([]);
      expect((await page(t, `after=${again.nextCursor}`)).data).toEqual([]);
    }
    // What comes later arrives after either cursor.
    const later = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2 })).body.data;
    expect((await drain(t, bare.nextCursor)).events.map((e) => [e.type, e.subject.id])).toEqual([['transaction.posted', later.id], ['stock.changed', f.item.id]]);
    expect((await page(t, `types=stock.changed&after=${filtered.nextCursor}`)).data.map((e) => e.data.transactionId)).toEqual([later.id]);
  });

  it('retention: a read from the start begins after the newest deleted event, so its cursor has missed nothing the feed deleted', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const created = await drain(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1 });
    const first = await drain(t, created.cursor);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2 });
    const second = await drain(t, first.cursor);
    // The retention job deleted the first adjustment's events but not yet the older ones before them (it
    // deletes in batches, in no order; an event's age is its transaction's start, not its place in the feed).
    await prune(ctx, t, first.events);
    await t.get(`/v1/events?after=${created.cursor}`).expect(410);
    const fresh = await page(t, 'limit=1');
    expect(fresh.data).toEqual(second.events.slice(0, 1));
    expect((await page(t, `after=${fresh.nextCursor}`)).data).toEqual(second.events.slice(1));
  });

  it('retention deletes only below the horizon: a read from the start never begins past a transaction still running', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    await drain(t);
    const held = await heldEvent(t.tenantId);
    try {
      const t2 = (await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2 })).body.data;
      // Every committed event of the tenant is past retention; T2's are above the horizon (T1 still runs), so they stay.
      await ctx.db.query(`UPDATE events SET occurred_at = occurred_at - interval '31 days' WHERE tenant_id = $1`, [t.tenantId]);
      await ctx.app.get(EventRetentionJob).runOnce();
      const during = await page(t);
      expect(during.data).toEqual([]);
      await held.client.query('COMMIT');
      expect((await drain(t, during.nextCursor)).events.map((e) => [e.type, e.subject.id])).toEqual([
        ['item.updated', held.subjectId],
        ['transaction.posted', t2.id],
        ['stock.changed', f.item.id],
      ]);
    } finally {
      await held.client.end().catch(() => undefined);
    }
  });

  it('retention: events older than EVENT_RETENTION_DAYS go; a cursor that missed one answers 410 cursor_expired', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const start = await drain(t);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1 });
    const middle = await drain(t, start.cursor);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1 });
    const other = await newTenant(ctx);
    await inventoryFixture(other);
    // counted once the feed has caught up with them (a page read at once may stop short of the last, behind
    // the horizon while another transaction of the database is still open)
    const otherStart = (await drain(other)).events.length;
    // Age this tenant's events up to the middle cursor by 31 days.
    await ctx.db.query(
      `UPDATE events SET occurred_at = occurred_at - interval '31 days' WHERE tenant_id = $1 AND id = ANY($2::uuid[])`,
      [t.tenantId, [...start.events, ...middle.events].map((e) => e.id)],
    );
    const job = ctx.app.get(EventRetentionJob);
    expect(await job.runOnce()).toBeGreaterThanOrEqual(start.events.length + middle.events.length);
    const gone = await t.get(`/v1/events?after=${start.cursor}`).expect(410);
    expect(gone.body).toEqual({ error: 'cursor_expired', message: expect.any(String), status: 410 });
    // From the middle cursor nothing was missed; from the start (no cursor) the kept events.
    expect((await page(t, `after=${middle.cursor}`)).data.map((e) => e.type)).toEqual(['transaction.posted', 'stock.changed']);
    expect((await page(t)).data.map((e) => e.type)).toEqual(['transaction.posted', 'stock.changed']);
    expect((await page(other)).data.length).toBe(otherStart);
  });
});
