import { Webhook as StandardWebhook } from 'standardwebhooks';
import { newTenant, startApp, TestContext } from '../support/app';
import { adjust, inventoryFixture, newItem } from '../support/fixtures';
import { ISO_MS, UUID } from '../support/matchers';
import { Delivery, W, webhookSpec } from './harness';
import type { Receiver } from './receiver';

/**
 * Delivery of the event feed to webhooks (CONTRACT §9) by the in-process workers, to receivers on loopback
 * (allowed by WEBHOOK_ALLOWED_HOSTS=127.0.0.1), on a database of the spec's own (so its workers deliver
 * only its events). The retry schedule is scaled down (WEBHOOK_BACKOFF_SCALE=0.01: 5 s → 50 ms) so that
 * retries come within the spec; Retry-After is not scaled. Signatures are checked with the
 * `standardwebhooks` package, independently of the service's code.
 */
describe('webhook delivery', () => {
  let ctx: TestContext;
  const { app, databaseUrl, receiver, subscribe, deliveries, attemptsUntil, feed, offWhileAdjusting } = webhookSpec({ METRICS_ENABLED: 'true' });
  beforeAll(() => (ctx = app()));

  /** What a process leaves when it dies mid-segment: the webhook's position past the tenant's events, their segment leased for `leasedFor`. */
  const leftSegment = async (tenantId: string, hookId: string, leasedFor: string): Promise<{ id: string }> =>
    (
      await ctx.db.query(
        `WITH last AS (SELECT txid, seq FROM events WHERE tenant_id = $1 ORDER BY txid DESC, seq DESC LIMIT 1),
              seg AS (INSERT INTO webhook_segments (tenant_id, id, webhook_id, after_txid, after_seq, last_txid, last_seq, lease, leased_until)
                      SELECT w.tenant_id, gen_random_uuid(), w.id, w.feed_txid, w.feed_seq, last.txid, last.seq, gen_random_uuid(), now() + $3::interval
                        FROM webhooks w, last WHERE w.tenant_id = $1 AND w.id = $2 RETURNING id, last_txid, last_seq),
              moved AS (UPDATE webhooks w SET feed_txid = seg.last_txid, feed_seq = seg.last_seq FROM seg WHERE w.tenant_id = $1 AND w.id = $2 RETURNING seg.id)
         SELECT id FROM moved`,
        [tenantId, hookId, leasedFor],
      )
    )[0] as { id: string };

  it('POSTs each event as the feed shows it, signed: standardwebhooks verifies every delivery; each attempt is listed', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const r = await receiver();
    const hook = await subscribe(t, r.url);
    const item = await newItem(t, f.uom('EA'));
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 4 });
    await r.until(() => r.received.length >= 3);
    const verifier = new StandardWebhook(hook.secret);
    const events = await feed(t);
    const mine = events.slice(events.findIndex((e) => e.type === 'item.created' && (e as { subject?: { id: string } }).subject?.id === item.id));
    expect(mine.map((e) => e.type)).toEqual(['item.created', 'transaction.posted', 'stock.changed']);
    // One attempt each, all delivered the first time (sent in parallel: in any order).
    const byId = new Map(mine.map((e) => [e.id, e]));
    expect(r.received.map((x) => x.headers['webhook-id']).sort()).toEqual([...byId.keys()].sort());
    for (const x of r.received) {
      const event = byId.get(x.headers['webhook-id']);
      expect(x.headers['content-type']).toBe('application/json');
      expect(Math.abs(Number(x.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
      expect(x.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(verifier.verify(x.body, x.headers)).toEqual(event);
      expect(JSON.parse(x.body)).toEqual(event);
    }
    // A tampered body or another secret does not verify.
    expect(() => verifier.verify(r.received[0].body.replace('item', 'itex'), r.received[0].headers)).toThrow();
    const attempts = await attemptsUntil(t, hook.id, (d) => d.length === 3 && d.every((a) => a.status === 'delivered'));
    expect(attempts.map((a) => a.eventId).sort()).toEqual([...byId.keys()].sort());
    for (const a of attempts)
      expect(a).toEqual({
        id: expect.stringMatching(UUID), eventId: expect.stringMatching(UUID), eventType: expect.any(String), attempt: 1, status: 'delivered',
        responseStatus: 204, error: null, attemptedAt: expect.stringMatching(ISO_MS), nextAttemptAt: null,
      });
    // Time-ordered ids (UUID version 7), as the events' own: new attempts go at the end of their indexes.
    expect(attempts.map((a) => [a.id[14], '89ab'.includes(a.id[19])])).toEqual([['7', true], ['7', true], ['7', true]]);
  });

  it('types: exact types and prefixes, as in the feed', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const stock = await receiver();
    const items = await receiver();
    const all = await receiver();
    await subscribe(t, stock.url, ['stock.changed']);
    await subscribe(t, items.url, ['item.*']);
    await subscribe(t, all.url, ['transaction.posted', 'item.created']);
    await newItem(t, f.uom('EA'));
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1 });
    await t.patch(`/v1/items/${f.item.id}`, { name: 'renamed' }).expect(200);
    await items.until(() => items.received.length >= 2);
    await all.until(() => all.received.length >= 2);
    await stock.until(() => stock.received.length >= 1);
    await new Promise((res) => setTimeout(res, 500));
    // Sorted: up to WEBHOOK_TENANT_CONCURRENCY attempts are sent at once, so arrival order is not the feed's (CONTRACT §9).
    const types = (r: Receiver) => r.received.map((x) => JSON.parse(x.body).type).sort();
    expect(types(stock)).toEqual(['stock.changed']);
    expect(types(items)).toEqual(['item.created', 'item.updated']);
    expect(types(all)).toEqual(['item.created', 'transaction.posted']);
  });

  it('a 500 is retried with the same webhook-id and body, signed anew; both attempts are listed', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const r = await receiver();
    r.answer = (x) => (r.of(x.headers['webhook-id']).length === 1 ? { status: 500, body: 'x'.repeat(5000) } : { status: 200, body: 'ok' });
    const hook = await subscribe(t, r.url, ['stock.changed']);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2 });
    await r.until(() => r.received.length >= 2);
    const [first, second] = r.received;
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second.body).toBe(first.body);
    const verifier = new StandardWebhook(hook.secret);
    expect(verifier.verify(first.body, first.headers)).toEqual(JSON.parse(first.body));
    expect(verifier.verify(second.body, second.headers)).toEqual(JSON.parse(second.body));
    const attempts = await attemptsUntil(t, hook.id, (d) => d.length === 2 && d[0].status === 'delivered');
    expect(attempts.map((a) => [a.attempt, a.status, a.responseStatus])).toEqual([[2, 'delivered', 200], [1, 'failed', 500]]);
    expect(attempts[1].error).toBe('answered 500');
    expect(attempts[1].nextAttemptAt).toMatch(ISO_MS);
    expect(attempts.every((a) => a.eventId === first.headers['webhook-id'])).toBe(true);
    // At most 1 KiB of an answer is kept.
    const [{ n }] = await ctx.db.query(`SELECT max(octet_length(response_body))::int AS n FROM webhook_deliveries WHERE tenant_id = $1`, [t.tenantId]);
    expect(n).toBe(1024);
    // Filters: one event's attempts, by status.
    expect((await deliveries(t, hook.id, `eventId=${attempts[0].eventId}&status=failed`)).map((a) => a.attempt)).toEqual([1]);
  });

  it("a failure's retry does not wait for a slow answer to another event of its segment: it is recorded as it fails", async () => {
    const t = await newTenant(ctx);
    const { r, hook, events } = await offWhileAdjusting(t, 2);
    // One segment of two events, sent at once: the first to arrive fails at once, the other is answered after 6 s.
    let failing: string | undefined;
    r.answer = (x) => {
      failing ??= x.headers['webhook-id'];
      if (x.headers['webhook-id'] !== failing) return { status: 204, delayMs: 6000 };
      return r.of(failing).length === 1 ? { status: 500 } : { status: 204 };
    };
    await t.patch(`${W}/${hook.id}`, { isActive: true }).expect(200);
    await r.until(() => r.received.length >= 3, 15_000);
    const [first, retry] = r.of(failing!);
    const slow = r.received.find((x) => x.headers['webhook-id'] !== failing)!;
    // The retry (due 50 ms after the failure, scaled) came about a second later, long before the slow answer.
    expect(retry.at - first.at).toBeLessThan(3000);
    expect(retry.at).toBeLessThan(slow.at + 5000);
    const attempts = await attemptsUntil(t, hook.id, (d) => d.length === 3 && d.every((a) => a.status === 'delivered' || a.attempt === 1));
    expect(attempts.map((a) => [a.eventId === failing, a.attempt, a.status]).sort()).toEqual([[false, 1, 'delivered'], [true, 1, 'failed'], [true, 2, 'delivered']]);
    await new Promise((res) => setTimeout(res, 300));
    expect(r.received.map((x) => x.headers['webhook-id']).sort()).toEqual([...events, failing].sort());
    expect((await ctx.db.query(`SELECT count(*)::int AS n FROM webhook_segments WHERE tenant_id = $1`, [t.tenantId]))[0].n).toBe(0);
  });

  it('Retry-After is honoured (seconds and HTTP date), beyond the scaled-down schedule', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const r = await receiver();
    r.answer = (x, nth) => {
      const n = r.of(x.headers['webhook-id']).length;
      if (n === 1) return { status: 503, headers: { 'Retry-After': '2' } };
      if (n === 2) return { status: 429, headers: { 'Retry-After': new Date(Date.now() + 2000).toUTCString() } };
      return { status: 200 };
    };
    const hook = await subscribe(t, r.url, ['stock.changed']);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2 });
    await r.until(() => r.received.length >= 3, 20_000);
    // The schedule alone would retry after 50 ms and 300 ms.
    expect(r.received[1].at - r.received[0].at).toBeGreaterThanOrEqual(1900);
    expect(r.received[2].at - r.received[1].at).toBeGreaterThanOrEqual(900); // an HTTP date has whole seconds
    const attempts = await attemptsUntil(t, hook.id, (d) => d.length === 3 && d[0].status === 'delivered');
    expect(attempts.map((a) => a.responseStatus)).toEqual([200, 429, 503]);
    // Every row has a time-ordered id (UUID version 7, RFC 9562 variant): the third, written by the second's record, too.
    expect(attempts.map((a) => [a.id[14], '89ab'.includes(a.id[19])])).toEqual([['7', true], ['7', true], ['7', true]]);
  });

  it('410 Gone turns the webhook off: no more attempts, nothing more delivered until it is turned on again', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const r = await receiver();
    r.answer = () => ({ status: 410 });
    const hook = await subscribe(t, r.url, ['stock.changed']);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 2 });
    await r.until(() => r.received.length >= 1);
    const attempts = await attemptsUntil(t, hook.id, (d) => d.length === 1 && d[0].status === 'failed');
    expect(attempts[0]).toMatchObject({ attempt: 1, status: 'failed', responseStatus: 410, nextAttemptAt: null });
    expect((await t.get(`${W}/${hook.id}`).expect(200)).body.data.isActive).toBe(false);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 3 });
    await new Promise((res) => setTimeout(res, 1500));
    expect(r.received).toHaveLength(1);
    expect(await deliveries(t, hook.id)).toHaveLength(1);
    // Turned on again, it delivers what came meanwhile.
    r.answer = () => ({ status: 200 });
    await t.patch(`${W}/${hook.id}`, { isActive: true }).expect(200);
    await r.until(() => r.received.length >= 2);
    expect(JSON.parse(r.received[1].body).data.qtyDelta).toBe(3);
  });

  it('410 mid-segment: the attempts not made yet are listed pending and made once the webhook is turned on again', async () => {
    const t = await newTenant(ctx);
    const { r, hook, events } = await offWhileAdjusting(t, 10);
    r.answer = () => ({ status: 410, delayMs: 100 });
    await t.patch(`${W}/${hook.id}`, { isActive: true }).expect(200);
    const first = await attemptsUntil(t, hook.id, (d) => d.length === 10);
    // The attempts in flight when the first 410 came (at most the webhook's share: WEBHOOK_TENANT_CONCURRENCY,
    // 8 by default, less one) failed; no other was made.
    const gone = first.filter((a) => a.status === 'failed');
    expect(gone.length).toBeGreaterThanOrEqual(1);
    expect(gone.length).toBeLessThanOrEqual(7);
    expect(gone.every((a) => a.responseStatus === 410 && a.nextAttemptAt === null)).toBe(true);
    expect(r.received.map((x) => x.headers['webhook-id']).sort()).toEqual(gone.map((a) => a.eventId).sort());
    const pending = first.filter((a) => a.status === 'pending');
    expect(pending).toHaveLength(10 - gone.length);
    expect(pending.every((a) => a.attempt === 1 && a.attemptedAt === null && a.responseStatus === null)).toBe(true);
    expect(new Set(first.map((a) => a.eventId))).toEqual(new Set(events));
    expect((await t.get(`${W}/${hook.id}`).expect(200)).body.data.isActive).toBe(false);
    // Turned on again: each pending one is made once; the ones that got 410 are not.
    r.answer = () => ({ status: 200 });
    await t.patch(`${W}/${hook.id}`, { isActive: true }).expect(200);
    await attemptsUntil(t, hook.id, (d) => d.filter((a) => a.status === 'delivered').length === pending.length);
    await new Promise((res) => setTimeout(res, 300));
    const after = r.received.slice(gone.length).map((x) => x.headers['webhook-id']).sort();
    expect(after).toEqual(pending.map((a) => a.eventId).sort());
  });

  it('a segment left by a process that died is sent once its lease has run out, and only then', async () => {
    const t = await newTenant(ctx);
    const { r, hook, events } = await offWhileAdjusting(t, 3);
    // What a process leaves when it dies mid-segment: the webhook's position past the events, their segment leased.
    const segment = await leftSegment(t.tenantId, hook.id, '1 hour');
    await t.patch(`${W}/${hook.id}`, { isActive: true }).expect(200);
    // Its lease still runs: nothing is sent.
    await new Promise((res) => setTimeout(res, 1000));
    expect(r.received).toHaveLength(0);
    await ctx.db.query(`UPDATE webhook_segments SET leased_until = now() - interval '1 second' WHERE tenant_id = $1 AND id = $2`, [t.tenantId, segment.id]);
    await r.until(() => r.received.length >= 3);
    await attemptsUntil(t, hook.id, (d) => d.length === 3 && d.every((a) => a.status === 'delivered' && a.attempt === 1));
    await new Promise((res) => setTimeout(res, 300));
    expect(r.received.map((x) => x.headers['webhook-id']).sort()).toEqual([...events].sort());
    expect((await ctx.db.query(`SELECT count(*)::int AS n FROM webhook_segments WHERE tenant_id = $1`, [t.tenantId]))[0].n).toBe(0);
  });

  it('a segment taken over from a dead process leaves out the events that process recorded early (their retries are rows of their own)', async () => {
    const t = await newTenant(ctx);
    const { r, hook, events } = await offWhileAdjusting(t, 3);
    // The dead process had leased the three and recorded the first one's failure early, its retry due in an hour.
    const segment = await leftSegment(t.tenantId, hook.id, '-1 second');
    expect(segment).toBeDefined();
    await ctx.db.query(
      `INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, occurred_at, attempt, status, response_status, error, attempted_at, next_attempt_at, body)
       SELECT e.tenant_id, $2, e.id, e.type, e.occurred_at, a.n, a.status, a.code, a.error, a.at, now() + interval '1 hour', a.body
         FROM events e,
              (VALUES (1, 'failed', 500, 'answered 500', now(), NULL), (2, 'pending', NULL, NULL, NULL, '{}')) AS a(n, status, code, error, at, body)
        WHERE e.tenant_id = $1 AND e.id = $3`,
      [t.tenantId, hook.id, events[0]],
    );
    await t.patch(`${W}/${hook.id}`, { isActive: true }).expect(200);
    await r.until(() => r.received.length >= 2);
    const attempts = await attemptsUntil(t, hook.id, (d) => d.filter((a) => a.status === 'delivered').length === 2);
    await new Promise((res) => setTimeout(res, 300));
    expect(r.received.map((x) => x.headers['webhook-id']).sort()).toEqual([events[1], events[2]].sort());
    expect(attempts.map((a) => [a.eventId, a.attempt, a.status]).sort()).toEqual(
      [[events[0], 1, 'failed'], [events[0], 2, 'pending'], [events[1], 1, 'delivered'], [events[2], 1, 'delivered']].sort(),
    );
    expect((await ctx.db.query(`SELECT count(*)::int AS n FROM webhook_segments WHERE tenant_id = $1`, [t.tenantId]))[0].n).toBe(0);
  });

  it('a slow receiver: sends stop starting 5 s into a segment, the rest are recorded pending and each is made once', async () => {
    const t = await newTenant(ctx);
    const { r, hook, events } = await offWhileAdjusting(t, 48);
    r.answer = () => ({ status: 200, delayMs: 1500 });
    await t.patch(`${W}/${hook.id}`, { isActive: true }).expect(200);
    // One segment of 48, 7 at a time (a webhook holds all but one of its tenant's 8 slots), 1.5 s each: 28 started in its first 5 s, 20 left for the retry path.
    const recorded = await attemptsUntil(t, hook.id, (d) => d.length === 48, 30_000);
    const notYet = recorded.filter((a) => a.status === 'pending');
    expect(notYet.length).toBeGreaterThanOrEqual(4);
    expect(notYet.every((a) => a.attempt === 1 && a.attemptedAt === null)).toBe(true);
    const done = await attemptsUntil(t, hook.id, (d) => d.length === 48 && d.every((a) => a.status === 'delivered'), 30_000);
    expect(done.every((a) => a.attempt === 1)).toBe(true);
    await new Promise((res) => setTimeout(res, 300));
    expect(r.received.map((x) => x.headers['webhook-id']).sort()).toEqual([...events].sort());
  }, 70_000);

  it("tenant isolation: a tenant's events reach only its own webhooks", async () => {
    const a = await newTenant(ctx);
    const b = await newTenant(ctx);
    const fa = await inventoryFixture(a);
    const fb = await inventoryFixture(b);
    const ra = await receiver();
    const rb = await receiver();
    await subscribe(a, ra.url);
    await subscribe(b, rb.url);
    await adjust(a, { itemId: fa.item.id, locationId: fa.location.id, qtyDelta: 1 });
    await adjust(b, { itemId: fb.item.id, locationId: fb.location.id, qtyDelta: 2 });
    await adjust(b, { itemId: fb.item.id, locationId: fb.location.id, qtyDelta: 3 });
    await ra.until(() => ra.received.length >= 2);
    await rb.until(() => rb.received.length >= 4);
    await new Promise((res) => setTimeout(res, 500));
    const aIds = new Set((await feed(a)).map((e) => e.id));
    const bIds = new Set((await feed(b)).map((e) => e.id));
    expect(ra.received.every((x) => aIds.has(x.headers['webhook-id']))).toBe(true);
    expect(rb.received.every((x) => bIds.has(x.headers['webhook-id']))).toBe(true);
    expect(ra.received).toHaveLength(2);
    expect(rb.received).toHaveLength(4);
  });

  it('no redirect is followed: a 3xx is a failed attempt, the redirect target gets nothing', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const elsewhere = await receiver();
    const r = await receiver();
    r.answer = () => ({ status: 307, headers: { Location: elsewhere.url } });
    const hook = await subscribe(t, r.url, ['stock.changed']);
    await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1 });
    const attempts = await attemptsUntil(t, hook.id, (d) => d.some((a) => a.status === 'failed'));
    expect(attempts.find((a) => a.status === 'failed')).toMatchObject({ responseStatus: 307, error: 'answered 307' });
    expect(elsewhere.received).toHaveLength(0);
    await t.patch(`${W}/${hook.id}`, { isActive: false }).expect(200);
  });

  it('the target is checked again at every attempt: a host this instance does not allow is refused, nothing is sent', async () => {
    // Created through an instance that allows `localhost`; delivered by this one, which allows only 127.0.0.1.
    const lenient = await startApp({ WEBHOOK_ALLOWED_HOSTS: 'localhost' }, databaseUrl());
    try {
      const t = await newTenant(lenient);
      const f = await inventoryFixture(t);
      const r = await receiver();
      const res = await t.post(W, { url: r.url.replace('127.0.0.1', 'localhost'), types: ['stock.changed'] }).expect(201);
      await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: 1 });
      const attempts = await attemptsUntil(t, res.body.data.id, (d) => d.length >= 2);
      const failed = attempts.find((a) => a.attempt === 1)!;
      expect(failed).toMatchObject({ status: 'failed', responseStatus: null, error: expect.stringMatching(/^target refused: host localhost is or resolves to a non-public address/) });
      expect(r.received).toHaveLength(0);
      await t.patch(`${W}/${res.body.data.id}`, { isActive: false }).expect(200);
    } finally {
      await lenient.close();
    }
  });

  it('every attempt is listed under deliveries, paged by cursor; metrics count outcomes and the lag', async () => {
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const r = await receiver();
    r.answer = (x) => (r.of(x.headers['webhook-id']).length < 3 ? { status: 502 } : { status: 200 });
    const hook = await subscribe(t, r.url, ['stock.changed']);
    for (let i = 1; i <= 3; i++) await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: i });
    const all = await attemptsUntil(t, hook.id, (d) => d.filter((a) => a.status === 'delivered').length === 3);
    expect(all).toHaveLength(9);
    expect(all.map((a) => a.attempt).sort()).toEqual([1, 1, 1, 2, 2, 2, 3, 3, 3]);
    expect(r.received).toHaveLength(9);
    const paged: Delivery[] = [];
    let after: string | null = null;
    do {
      const page: { data: Delivery[]; nextCursor: string | null; count: number } = (await t.get(`${W}/${hook.id}/deliveries?limit=2${after ? `&after=${after}` : ''}`).expect(200)).body;
      expect(page.count).toBe(9);
      paged.push(...page.data);
      after = page.nextCursor;
    } while (after);
    expect(paged).toEqual(all);
    await t.get(`${W}/${hook.id}/deliveries?after=garbage`).expect(400);
    const metrics = (await ctx.http.get('/metrics').expect(200)).text;
    expect(Number(/webhook_deliveries_total\{outcome="delivered"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);
    expect(Number(/webhook_deliveries_total\{outcome="failed"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(6);
    expect(Number(/webhook_delivery_lag_seconds_count (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);
  });
});
