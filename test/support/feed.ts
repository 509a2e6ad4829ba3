import type { Tenant } from './app';

/** An event as GET /v1/events answers it. */
export interface FeedEvent {
  id: string;
  type: string;
  occurredAt: string;
  action: string;
  subject: { type: string; id: string };
  data: Record<string, unknown> & { id?: string };
}

/** A superuser's connection (e.g. a TestContext's `db`): to see the feed's horizon. */
export type Db = { query(text: string, params?: unknown[]): Promise<Array<Record<string, unknown>>> };

/** Whether every event of the tenant written so far is below the feed's horizon (the feed can hand it out). */
export async function feedCaughtUp(db: Db, tenantId: string): Promise<boolean> {
  const [{ ok }] = await db.query(
    `SELECT coalesce((SELECT max(txid) FROM events WHERE tenant_id = $1) < pg_snapshot_xmin(pg_current_snapshot())::text::bigint, true) AS ok`,
    [tenantId],
  );
  return ok === true;
}

/**
 * Waits (up to 30 s) until every event of the tenant written so far is below the feed's horizon: the feed
 * shows an event once every transaction that began before it has ended, anywhere on the server, and other
 * specs' transactions run on the same server.
 */
export async function untilFeedCaughtUp(db: Db, tenantId: string): Promise<void> {
  for (let i = 0; !(await feedCaughtUp(db, tenantId)); i++) {
    if (i > 300) throw new Error('the feed did not catch up within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Every event of `t` after `after` (pages of `limit` until an empty one), and the last cursor. The feed
 * shows an event once every transaction that began before it has ended, and other specs' transactions run
 * on the same server: so first wait (untilFeedCaughtUp) until the tenant's newest event is below that horizon.
 * Never call it while the spec itself holds a transaction open that wrote events.
 */
export async function drainFeed(db: Db, t: Tenant, after?: string, limit = 500): Promise<{ events: FeedEvent[]; cursor: string }> {
  await untilFeedCaughtUp(db, t.tenantId);
  const events: FeedEvent[] = [];
  let cursor = after;
  for (;;) {
    const p = (await t.get(`/v1/events?limit=${limit}${cursor ? `&after=${cursor}` : ''}`).expect(200)).body as { data: FeedEvent[]; nextCursor: string };
    cursor = p.nextCursor;
    events.push(...p.data);
    if (!p.data.length) return { events, cursor };
  }
}
