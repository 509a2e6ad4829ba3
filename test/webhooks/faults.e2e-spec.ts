import type { Worker } from 'node:worker_threads';
import type * as DispatcherModule from '../../src/webhooks/webhook-dispatcher';
import { newTenant, TestContext } from '../support/app';
import { fromDist } from '../support/dist';
import { adjust, inventoryFixture } from '../support/fixtures';
import { W, webhookSpec } from './harness';
import { Received } from './receiver';

/** Most requests a receiver had in flight at once, each answered `delayMs` after it arrived. */
const mostInFlight = (received: Received[], delayMs: number) =>
  Math.max(0, ...received.map((x) => received.filter((y) => y.at <= x.at && x.at < y.at + delayMs).length));

/**
 * Webhook delivery when parts of it are slow or fail (CONTRACT §9; the service's own processes, receivers
 * on loopback, a database of the spec's own): a slow receiver and the per-tenant bound on attempts in
 * flight (shared by the tenant's webhooks due at the same run; one webhook holds at most all but one of
 * them; a webhook's due retries and its feed take turns), a process whose segment lease ran out before it
 * recorded, and (below) the delivery thread dying mid-segment. Bounds: WEBHOOK_CONCURRENCY 16 (the default),
 * WEBHOOK_TENANT_CONCURRENCY 4 (3 per webhook; the default is 8), attempts made on the event loop (the default).
 */
describe('webhook delivery under faults', () => {
  let ctx: TestContext;
  const { app, receiver, subscribe, deliveries, attemptsUntil, feed, offWhileAdjusting } = webhookSpec({ WEBHOOK_TENANT_CONCURRENCY: '4' });
  beforeAll(() => (ctx = app()));

  it("a slow receiver takes no other tenant's slots and at most its own tenant's, which its webhooks due together share", async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    const fa = await inventoryFixture(a);
    const fb = await inventoryFixture(b);
    const slow = await receiver();
    const SLOW_MS = 5000;
    slow.answer = () => ({ status: 204, delayMs: SLOW_MS });
    const fast = await receiver();
    const other = await receiver();
    const hooks = [await subscribe(a, slow.url, ['stock.changed']), await subscribe(a, fast.url, ['stock.changed'])];
    const otherHook = await subscribe(b, other.url, ['stock.changed']);
    for (const [t, h] of [[a, hooks[0]], [a, hooks[1]], [b, otherHook]] as const) await t.patch(`${W}/${h.id}`, { isActive: false }).expect(200);
    const N = 14;
    for (let i = 1; i <= N; i++) await adjust(a, { itemId: fa.item.id, locationId: fa.location.id, qtyDelta: i });
    for (let i = 1; i <= 3; i++) await adjust(b, { itemId: fb.item.id, locationId: fb.location.id, qtyDelta: i });
    const aEvents = (await feed(a)).filter((e) => e.type === 'stock.changed').map((e) => e.id);
    expect(aEvents).toHaveLength(N);
    await feed(b);
    // All three turned on in one statement (PATCH isActive does no more than this): due at the same run.
    await ctx.db.query(`UPDATE webhooks SET is_active = true WHERE tenant_id = ANY($1::uuid[])`, [[a.tenantId, b.tenantId]]);
    // Tenant a's two webhooks share its 4 slots, 2 each: the slow one starts 2 attempts, and the fast one and
    // the other tenant's are done before the slow one's first answer could free a slot.
    await fast.until(() => fast.received.length >= N, 15_000, "the tenant's fast webhook");
    await other.until(() => other.received.length >= 3, 15_000, "the other tenant's webhook");
    // The slow one's first attempts may reach its receiver after the fast one is done (its lease can be the
    // later statement): what matters is that the others never wait for a slow answer.
    await slow.until(() => slow.received.length >= 1, 15_000, "the slow webhook's first attempt");
    const firstSlowAnswer = slow.received[0].at + SLOW_MS;
    expect(Math.max(...fast.received.map((x) => x.at))).toBeLessThan(firstSlowAnswer);
    expect(Math.max(...other.received.map((x) => x.at))).toBeLessThan(firstSlowAnswer);
    expect(fast.received.map((x) => x.headers['webhook-id']).sort()).toEqual([...aEvents].sort());
    await new Promise((res) => setTimeout(res, Math.max(0, firstSlowAnswer - 200 - Date.now())));
    expect(slow.received).toHaveLength(2);
    // The slow one gets every event in the end, each once; its retries, claimed when slots free up, are never
    // more than all but one of the tenant's 4 in flight, and are 3 at a time once its backlog waits for them.
    await slow.until(() => slow.received.length >= N, 45_000, "the slow webhook's deliveries");
    await new Promise((res) => setTimeout(res, SLOW_MS + 300));
    expect(slow.received.map((x) => x.headers['webhook-id']).sort()).toEqual([...aEvents].sort());
    expect(mostInFlight(slow.received, SLOW_MS)).toBe(3);
  }, 75_000);

  it("a slow receiver's backlog leaves its tenant's other webhooks a slot: its segment and its retries hold 3 of the 4", async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const slow = await receiver();
    const SLOW_MS = 5000;
    slow.answer = () => ({ status: 204, delayMs: SLOW_MS });
    const fast = await receiver();
    const [slowHook, fastHook] = [await subscribe(t, slow.url, ['stock.changed']), await subscribe(t, fast.url, ['stock.changed'])];
    for (const h of [slowHook, fastHook]) await t.patch(`${W}/${h.id}`, { isActive: false }).expect(200);
    const N = 10;
    for (let i = 1; i <= N; i++) await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: i });
    await feed(t);
    // The slow one alone first: its segment takes 3 senders, not the tenant's 4.
    await t.patch(`${W}/${slowHook.id}`, { isActive: true }).expect(200);
    await slow.until(() => slow.received.length >= 3, 10_000, "the slow webhook's first attempts");
    await t.patch(`${W}/${fastHook.id}`, { isActive: true }).expect(200);
    await fast.until(() => fast.received.length >= N, 10_000, "the fast webhook's backlog");
    expect(Math.max(...fast.received.map((x) => x.at))).toBeLessThan(slow.received[0].at + SLOW_MS);
    expect(slow.received).toHaveLength(3);
    // Its segment's time is up: the rest wait for retries, claimed 3 at a time; a new event still gets through.
    await slow.until(() => slow.received.length >= 6, 20_000, "the slow webhook's retries");
    const retriesStarted = slow.received[5].at;
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 100 });
    await fast.until(() => fast.received.length >= N + 1, 10_000, 'the new event');
    expect(fast.received[N].at).toBeLessThan(retriesStarted + SLOW_MS);
    expect(slow.received.filter((x) => x.at >= slow.received[3].at && x.at < retriesStarted + SLOW_MS)).toHaveLength(3);
  }, 60_000);

  it("a webhook's due retries do not wait until its feed is caught up: the feed yields after its segment", async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const r = await receiver();
    r.answer = () => ({ status: 204, delayMs: 1000 });
    const hook = await subscribe(t, r.url, ['stock.changed']);
    await t.patch(`${W}/${hook.id}`, { isActive: false }).expect(200);
    // Five segments' worth of events (a segment is at most 200 events, sent for at most 5 s).
    const SEGMENT = 200;
    for (let i = 0; i < 5 * SEGMENT; i += 20)
      await Promise.all(Array.from({ length: 20 }, (_, j) => adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: i + j + 1 })));
    const events = (await feed(t)).filter((e) => e.type === 'stock.changed').map((e) => e.id);
    expect(events).toHaveLength(5 * SEGMENT);
    const order = new Map(events.map((id, i) => [id, i]));
    await t.patch(`${W}/${hook.id}`, { isActive: true }).expect(200);
    // A segment sends about 15 of its up to 200 events in its 5 s (3 at once, 1 s each) and records the rest
    // due; the feed sends in feed order, so the next segment starts with a jump ahead, and an event sent well
    // behind the furthest one sent before it is a claimed retry. (Segments may be shorter than 200 when
    // another database's open transaction holds the server's feed horizon back: counted by their jumps.)
    const firstRetry = () => {
      let furthest = -1;
      let segments = 1;
      for (const x of r.received) {
        const i = order.get(x.headers['webhook-id'])!;
        if (i < furthest - 10) return { segmentsBefore: segments };
        if (furthest >= 0 && i > furthest + 10) segments++;
        furthest = Math.max(furthest, i);
      }
      return undefined;
    };
    await r.until(() => !!firstRetry(), 40_000, "the first segment's retries");
    // The retries came after the second segment, not after the feed had gone through all five or more.
    expect(firstRetry()!.segmentsBefore).toBeLessThanOrEqual(3);
    expect(firstRetry()!.segmentsBefore).toBeGreaterThanOrEqual(2);
  }, 90_000);

  it('a process whose segment lease ran out before it recorded records nothing: the segment is sent again and listed once', async () => {
    const t = await newTenant(ctx);
    const { r, hook, events } = await offWhileAdjusting(t, 3);
    r.answer = () => ({ status: 204, delayMs: 1000 });
    await t.patch(`${W}/${hook.id}`, { isActive: true }).expect(200);
    await r.until(() => r.received.length >= 3, 10_000, 'the first attempts');
    // While its attempts wait for their answers, the lease runs out and passes on (as to another process).
    const moved = await ctx.db.query(
      `UPDATE webhook_segments SET lease = gen_random_uuid(), leased_until = now() - interval '1 second' WHERE tenant_id = $1 RETURNING id`,
      [t.tenantId],
    );
    expect(moved[0]).toHaveLength(1); // an UPDATE answers [rows, count] through TypeORM: the segment's one row
    r.answer = () => ({ status: 204 });
    // The late record finds the segment no longer its own: nothing of it is kept; the expired segment is leased and sent again.
    await r.until(() => r.received.length >= 6, 20_000, 'the segment sent again');
    await attemptsUntil(t, hook.id, (d) => d.length === 3 && d.every((x) => x.status === 'delivered'));
    await new Promise((res) => setTimeout(res, 500));
    const listed = await deliveries(t, hook.id);
    expect(listed).toHaveLength(3);
    expect(listed.every((x) => x.attempt === 1)).toBe(true);
    expect(listed.map((x) => x.eventId).sort()).toEqual([...events].sort());
    for (const e of events) expect(r.of(e)).toHaveLength(2);
    const late = listed.map((x) => Date.parse(x.attemptedAt!));
    const firstArrivals = events.map((e) => r.of(e)[0].at);
    // Each listed attempt is the second sending, not the late one's.
    expect(Math.min(...late)).toBeGreaterThan(Math.max(...firstArrivals));
    expect((await ctx.db.query(`SELECT count(*)::int AS n FROM webhook_segments WHERE tenant_id = $1`, [t.tenantId]))[0].n).toBe(0);
  }, 60_000);
});

/** The same with the attempts' HTTP exchanges on a thread of their own (WEBHOOK_DELIVERY_THREAD=true), which can fail alone. */
describe('webhook delivery on the delivery thread, under faults', () => {
  let ctx: TestContext;
  const { app, attemptsUntil, offWhileAdjusting } = webhookSpec({ WEBHOOK_TENANT_CONCURRENCY: '4', WEBHOOK_DELIVERY_THREAD: 'true' });
  beforeAll(() => (ctx = app()));

  it('the delivery thread dies mid-segment: its attempts are made again on a new thread, none lost', async () => {
    const t = await newTenant(ctx);
    const { r, hook, events } = await offWhileAdjusting(t, 6);
    r.answer = () => ({ status: 204, delayMs: 1000 });
    await t.patch(`${W}/${hook.id}`, { isActive: true }).expect(200);
    // The segment's first 3 attempts (a webhook's share of the tenant's 4 slots) wait for their answers when
    // the thread that makes the HTTP exchanges ends, as a crash would end it.
    await r.until(() => r.received.length >= 3, 10_000, 'the first attempts');
    const { WebhookDispatcher } = fromDist<typeof DispatcherModule>('webhooks/webhook-dispatcher');
    const thread = (ctx.app.get(WebhookDispatcher) as unknown as { deliveries: { worker?: Worker } }).deliveries;
    const crashed = thread.worker!;
    const crashAt = Date.now();
    const beforeCrash = new Set(r.received.map((x) => x.headers['webhook-id']));
    expect(beforeCrash.size).toBe(3);
    await crashed.terminate();
    r.answer = () => ({ status: 204 });
    const done = await attemptsUntil(t, hook.id, (d) => events.every((e) => d.some((x) => x.eventId === e && x.status === 'delivered')), 30_000);
    await new Promise((res) => setTimeout(res, 300));
    expect(thread.worker).toBeDefined();
    expect(thread.worker).not.toBe(crashed);
    // Those in flight at the crash arrive once more after it (their answers were lost); the others once, after it.
    for (const e of events) {
      const arrivals = r.of(e);
      expect(arrivals).toHaveLength(beforeCrash.has(e) ? 2 : 1);
      expect(arrivals[arrivals.length - 1].at).toBeGreaterThanOrEqual(crashAt);
    }
    // The attempts the thread did not end are listed pending, then made: one delivered attempt per event.
    expect(done.filter((x) => x.status === 'delivered').map((x) => x.eventId).sort()).toEqual([...events].sort());
  }, 60_000);
});
