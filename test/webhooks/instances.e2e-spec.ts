import { newTenant, startApp, TestContext } from '../support/app';
import { adjust, inventoryFixture } from '../support/fixtures';
import { ServiceProcess, startServiceProcess } from '../support/processes';
import { offWhile, W } from './harness';
import { ownDatabase, Receiver } from './receiver';

/**
 * Webhook delivery across service processes on one database (CONTRACT §9: several instances deliver each
 * attempt once between them; a restart loses no pending delivery), on a database of the spec's own.
 */
describe('webhook delivery across service processes', () => {
  let ctx: TestContext;
  let db: { url: string; drop(): Promise<void> };
  let env: Record<string, string>;
  const running: ServiceProcess[] = [];
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    db = await ownDatabase();
    ctx = await startApp({}, db.url); // migrates the database and runs the test IdP the processes trust; its workers are off
    env = {
      DATABASE_URL: db.url, AUTH_MODE: 'jwt', IDP_ISSUER_URL: ctx.idp.issuer, IDP_AUDIENCE: ctx.idp.audience, CLAIM_NAMESPACE: ctx.idp.claimNamespace,
      DB_POOL_SIZE: '10', METRICS_ENABLED: 'true',
      WEBHOOKS_ENABLED: 'true', WEBHOOK_POLL_MS: '100', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    };
  }, 60_000);
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    await Promise.all(receivers.map((r) => r.stop()));
    await ctx?.close();
    await db?.drop();
  });

  const start = async (extra: Record<string, string> = {}) => {
    const p = await startServiceProcess({ ...env, ...extra });
    running.push(p);
    return p;
  };
  const stop = async (p: ServiceProcess) => {
    await p.stop();
    running.splice(running.indexOf(p), 1);
  };
  const delivered = async (p: ServiceProcess) =>
    Number(/webhook_deliveries_total\{outcome="delivered"\} (\d+)/.exec((await p.http.get('/metrics').expect(200)).text)?.[1] ?? 0);

  it('two processes deliver 500 events to one receiver: every event at least once, no attempt twice', async () => {
    const [p1, p2] = await Promise.all([start(), start()]);
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const r = await Receiver.start(() => ({ status: 200 }));
    receivers.push(r);
    await t.post(W, { url: r.url, types: ['stock.changed'] }).expect(201);
    for (let i = 0; i < 500; i += 25)
      await Promise.all(Array.from({ length: 25 }, (_, j) => adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: i + j + 1 })));
    const ids = () => new Set(r.received.map((x) => x.headers['webhook-id']));
    await r.until(() => ids().size >= 500, 90_000);
    await new Promise((res) => setTimeout(res, 1000)); // anything late would show now
    const counts = new Map<string, number>();
    for (const x of r.received) counts.set(x.headers['webhook-id'], (counts.get(x.headers['webhook-id']) ?? 0) + 1);
    const duplicates = [...counts.values()].filter((n) => n > 1).length;
    expect({ events: counts.size, requests: r.received.length, duplicates }).toEqual({ events: 500, requests: 500, duplicates: 0 });
    // The events delivered are the tenant's stock.changed events, each with one attempt, delivered.
    const rows = await ctx.db.query(`SELECT event_id, attempt, status FROM webhook_deliveries WHERE tenant_id = $1`, [t.tenantId]);
    expect(rows).toHaveLength(500);
    expect(rows.every((x: { attempt: number; status: string }) => x.attempt === 1 && x.status === 'delivered')).toBe(true);
    expect(new Set(rows.map((x: { event_id: string }) => x.event_id))).toEqual(ids());
    // Both processes took part.
    const [n1, n2] = [await delivered(p1), await delivered(p2)];
    expect(n1 + n2).toBe(500);
    expect(Math.min(n1, n2)).toBeGreaterThan(0);
    // Event-to-delivery lag as the receiver saw it (its clock is the service's: one machine).
    const lags = r.received.map((x) => x.at - Date.parse(JSON.parse(x.body).occurredAt)).sort((a, b) => a - b);
    const pct = (p: number) => lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))];
    process.stdout.write(`500 events: process 1 delivered ${n1}, process 2 ${n2}; duplicates ${duplicates}; lag p50 ${pct(50)} ms, p99 ${pct(99)} ms, max ${lags[lags.length - 1]} ms\n`);
    await Promise.all([stop(p1), stop(p2)]);
  }, 140_000);

  // Both places an attempt's exchange can be made: the event loop (the default) and the delivery thread.
  it.each([
    ['on the event loop', {}],
    ['on the delivery thread', { WEBHOOK_DELIVERY_THREAD: 'true' }],
  ])('a process stopped mid-segment (attempts %s) records what it sent and leaves the rest pending: another delivers them, none lost', async (_where, extra: Record<string, string>) => {
    const first = await start(extra);
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const r = await Receiver.start(() => ({ status: 200, delayMs: 200 }));
    receivers.push(r);
    const hook = (await t.post(W, { url: r.url, types: ['stock.changed'] }).expect(201)).body.data;
    // Forty events leased as one segment once the webhook is on; a slow receiver: 7 at a time (a webhook's share of its tenant's 8), 200 ms each.
    await offWhile(ctx.db, t, hook.id, () => Promise.all(Array.from({ length: 40 }, (_, i) => adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: i + 1 }))));
    await t.patch(`${W}/${hook.id}`, { isActive: true }).expect(200);
    await r.until(() => r.received.length >= 8, 20_000);
    await stop(first); // SIGTERM: the segment ends early, recorded
    // The attempts were made where the setting says (the thread logs its start).
    expect(first.output().includes('webhook delivery thread started')).toBe(!!extra.WEBHOOK_DELIVERY_THREAD);
    const sentBefore = new Set(r.received.map((x) => x.headers['webhook-id']));
    expect(sentBefore.size).toBeLessThan(40);
    expect((await ctx.db.query(`SELECT count(*)::int AS n FROM webhook_segments WHERE tenant_id = $1`, [t.tenantId]))[0].n).toBe(0);
    const rows: Array<{ event_id: string; status: string }> = await ctx.db.query(`SELECT event_id, status FROM webhook_deliveries WHERE tenant_id = $1 AND attempt = 1`, [t.tenantId]);
    expect(rows).toHaveLength(40);
    // Every answered attempt is recorded delivered; the rest (in flight when it stopped, or not started) wait pending.
    const delivered = rows.filter((x) => x.status === 'delivered').map((x) => x.event_id);
    expect(delivered.length).toBeGreaterThanOrEqual(4);
    expect(delivered.every((id) => sentBefore.has(id))).toBe(true);
    expect(rows.filter((x) => x.status === 'pending')).toHaveLength(40 - delivered.length);
    const second = await start();
    const ids = () => new Set(r.received.map((x) => x.headers['webhook-id']));
    await r.until(() => ids().size >= 40, 30_000);
    await new Promise((res) => setTimeout(res, 500));
    // Sent twice: at most the attempts in flight when the first process stopped (answers it did not wait for).
    const twice = r.received.length - ids().size;
    expect(twice).toBeLessThanOrEqual(sentBefore.size - delivered.length);
    expect(r.received.filter((x) => delivered.includes(x.headers['webhook-id']))).toHaveLength(delivered.length);
    // Listed: one first attempt per event, each delivered.
    const listed = async () => (await t.get(`${W}/${hook.id}/deliveries?limit=100`).expect(200)).body.data as Array<{ attempt: number; status: string }>;
    for (const until = Date.now() + 10_000; (await listed()).some((a) => a.status !== 'delivered') && Date.now() < until; ) await new Promise((res) => setTimeout(res, 100));
    expect((await listed()).map((a) => `${a.attempt} ${a.status}`)).toEqual(Array(40).fill('1 delivered'));
    await stop(second); // not left running into the next case, where it could lease that case's segment
  }, 90_000);

  it('a process killed (SIGKILL) while its deliveries wait in backoff: they arrive after the restart', async () => {
    // The real schedule: the first retry 5 s after a failure.
    const first = await start({ WEBHOOK_BACKOFF_SCALE: '1' });
    const t = await newTenant(ctx);
    const f = await inventoryFixture(t);
    const r = await Receiver.start();
    receivers.push(r);
    r.answer = (x) => (r.of(x.headers['webhook-id']).length === 1 ? { status: 503 } : { status: 200 });
    const hook = (await t.post(W, { url: r.url, types: ['stock.changed'] }).expect(201)).body.data;
    // The ten first attempts before any retry: the webhook is turned on once all ten events can be leased
    // (another suite's transaction could otherwise hold the last ones back past the 5 s backoff).
    await offWhile(ctx.db, t, hook.id, async () => {
      for (let i = 1; i <= 10; i++) await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: i });
    });
    await t.patch(`${W}/${hook.id}`, { isActive: true }).expect(200);
    await r.until(() => r.received.length >= 10);
    // Killed once every failure is recorded with its retry scheduled (an outcome is recorded after the
    // receiver's answer): the process dies in the backoff, not mid-attempt.
    const retriesWaiting = async () =>
      (await ctx.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'pending' AND attempt = 2`, [t.tenantId]))[0].n as number;
    for (const until = Date.now() + 10_000; (await retriesWaiting()) < 10 && Date.now() < until; ) await new Promise((res) => setTimeout(res, 50));
    first.child.kill('SIGKILL');
    await new Promise((res) => first.child.once('exit', res));
    running.splice(running.indexOf(first), 1);
    // Killed in the backoff: every event failed once, none retried yet, the retries wait in the database.
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(10);
    expect(r.received).toHaveLength(10);
    const [{ n }] = await ctx.db.query(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND status = 'pending' AND attempt = 2`, [t.tenantId]);
    expect(n).toBe(10);
    await start({ WEBHOOK_BACKOFF_SCALE: '1' });
    await r.until(() => r.received.length >= 20, 30_000);
    const retried = r.received.slice(10);
    expect(new Set(retried.map((x) => x.headers['webhook-id']))).toEqual(new Set(r.received.slice(0, 10).map((x) => x.headers['webhook-id'])));
    // Each retry came no sooner than the schedule's 5 s after its first attempt.
    for (const x of retried) expect(x.at - r.of(x.headers['webhook-id'])[0].at).toBeGreaterThanOrEqual(4500);
    // The retries' outcomes are recorded just after the receiver answered them: wait for them (bounded).
    const listed = async () => ((await t.get(`${W}/${hook.id}/deliveries?limit=100`).expect(200)).body.data as Array<{ attempt: number; status: string }>);
    let attempts = await listed();
    for (const until = Date.now() + 10_000; attempts.some((a) => a.status === 'pending') && Date.now() < until; ) {
      await new Promise((res) => setTimeout(res, 50));
      attempts = await listed();
    }
    expect(attempts.map((a) => `${a.attempt} ${a.status}`).sort()).toEqual([...Array(10).fill('1 failed'), ...Array(10).fill('2 delivered')]);
  }, 120_000);
});
