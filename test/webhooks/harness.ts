import { Tenant, TestContext } from '../support/app';
import { drainFeed } from '../support/feed';
import { adjust, inventoryFixture } from '../support/fixtures';
import { Receiver } from './receiver';

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

/** The webhook specs' steps, against the app `ctx()` returns; `receiver()` starts a loopback receiver the spec stops. */
export function webhookSteps(ctx: () => TestContext, receiver: () => Promise<Receiver>) {
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
    await t.patch(`${W}/${hook.id}`, { isActive: false }).expect(200);
    for (let i = 1; i <= n; i++) await adjust(t, { itemId: f.item.id, locationId: f.location.id, qtyDelta: i });
    const events = (await feed(t)).filter((e) => e.type === 'stock.changed').map((e) => e.id);
    if (events.length !== n) throw new Error(`expected ${n} stock.changed events, the feed has ${events.length}`);
    return { r, hook, events };
  };
  return { subscribe, deliveries, attemptsUntil, feed, offWhileAdjusting };
}
