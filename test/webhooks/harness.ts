import { startApp, Tenant, TestContext } from '../support/app';
import { Db, drainFeed, untilFeedCaughtUp } from '../support/feed';
import { adjust, inventoryFixture } from '../support/fixtures';
import { Answer, ownDatabase, Receiver } from './receiver';

export const W = '/v1/webhooks';

/** An attempt as GET /v1/webhooks/{id}/deliveries lists it. */
export interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: string;
  responseStatus: number | null;
  error: string | null;
  attemptedAt: string | null;
  nextAttemptAt: string | null;
}

/**
 * Turns the webhook off, runs `write`, and waits until the tenant's events are below the feed's horizon
 * (other specs' open transactions on the same server hold it back): turned on again, the webhook leases
 * every event `write` made, in one segment.
 */
export async function offWhile(db: Db, t: Tenant, hookId: string, write: () => Promise<unknown>): Promise<void> {
  await t.patch(`${W}/${hookId}`, { isActive: false }).expect(200);
  await write();
  await untilFeedCaughtUp(db, t.tenantId);
}

/**
 * A webhook spec's service, for a `describe` block: before all, a database of the spec's own and the app on it
 * with the workers on (a 50 ms poll, the retry schedule scaled to 1%: 5 s → 50 ms) and `env`; after all, the
 * receivers the spec started (`receiver()`), the app and the database go. `app()` and `databaseUrl()` answer
 * from the first test on. With the spec's steps.
 */
export function webhookSpec(env: Record<string, string> = {}) {
  let ctx: TestContext | undefined;
  let db: { url: string; drop(): Promise<void> } | undefined;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    db = await ownDatabase();
    ctx = await startApp({ WEBHOOKS_ENABLED: 'true', WEBHOOK_POLL_MS: '50', WEBHOOK_BACKOFF_SCALE: '0.01', ...env }, db.url);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.stop()));
    await ctx?.close();
    await db?.drop();
  });
  const app = (): TestContext => {
    if (!ctx) throw new Error('the webhook spec app is not started (use it inside a test)');
    return ctx;
  };
  const receiver = async (answer?: Answer): Promise<Receiver> => {
    const r = await Receiver.start(answer);
    receivers.push(r);
    return r;
  };
  return { app, databaseUrl: () => db!.url, receiver, ...webhookSteps(app, receiver) };
}

/** The webhook specs' steps, against the app `ctx()` returns; `receiver()` starts a loopback receiver the spec stops. */
function webhookSteps(ctx: () => TestContext, receiver: () => Promise<Receiver>) {
  const subscribe = async (t: Tenant, url: string, types?: string[]) => (await t.post(W, { url, ...(types && { types }) }).expect(201)).body.data as { id: string; secret: string };
  const deliveries = async (t: Tenant, hookId: string, query = 'limit=500'): Promise<Delivery[]> => (await t.get(`${W}/${hookId}/deliveries?${query}`).expect(200)).body.data;
  /** Waits until the webhook's attempts satisfy `done`. */
  const attemptsUntil = async (t: Tenant, hookId: string, done: (d: Delivery[]) => boolean, ms = 20_000): Promise<Delivery[]> => {
    const end = Date.now() + ms;
    for (;;) {
      const d = await deliveries(t, hookId);
      if (done(d)) return d;
      if (Date.now() > end) throw new Error(`attempts not as expected within ${ms} ms: ${JSON.stringify(d).slice(0, 600)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  /** The tenant's feed, once it has caught up with its writes (other specs' open transactions hold its horizon back). */
  const feed = async (t: Tenant) => (await drainFeed(ctx().db, t)).events as Array<{ id: string; type: string }>;
  /**
   * A webhook on stock.changed, off while `n` adjustments happen: turned on, it leases their events as one
   * segment. Returns it, its receiver and the events' ids.
   */
  const offWhileAdjusting = async (t: Tenant, n: number) => {
    const f = await inventoryFixture(t);
    const r = await receiver();
    const hook = await subscribe(t, r.url, ['stock.changed']);
    await offWhile(ctx().db, t, hook.id, async () => {
      for (let i = 1; i <= n; i++) await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: i });
    });
    const events = (await feed(t)).filter((e) => e.type === 'stock.changed').map((e) => e.id);
    if (events.length !== n) throw new Error(`expected ${n} stock.changed events, the feed has ${events.length}`);
    return { r, hook, events };
  };
  return { subscribe, deliveries, attemptsUntil, feed, offWhileAdjusting };
}
