import { MigrationInterface, QueryRunner } from 'typeorm';
import { APP_ROLE, tenantPolicy } from './lib/rls';

/**
 * First attempts straight from the feed, a segment at a time.
 *
 * Before: the fan-out wrote a pending row per event, a claim updated it with a lease, the outcome updated it
 * again: three row versions (each with its index entries) and three transactions per delivery, which cost
 * the database as much as the posting that raised the event. Now the feed itself is the queue of first
 * attempts: a process leases a segment of a webhook's feed (`webhook_segments`: the range after
 * `after_txid`/`after_seq` up to `last_txid`/`last_seq`), moving the webhook's position past it, in one
 * transaction; it sends the segment's events; then, in one statement, deletes the segment (only while the
 * lease is still its own) and inserts each attempt as it ended — one row per attempt, written once — with
 * the retries it schedules as pending rows (attempt 2, claimed as before). A segment whose lease ran out
 * (its process died mid-segment) is leased again by any process and its events sent again: nothing is lost,
 * and what is sent twice is what a lost answer explains.
 *
 * `webhooks_with_events` now also names active webhooks with a segment whose lease ran out.
 */
export class WebhookSegments1763780000015 implements MigrationInterface {
  name = 'WebhookSegments1763780000015';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_segments (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        webhook_id uuid NOT NULL,
        after_txid bigint NOT NULL,
        after_seq bigint NOT NULL,
        last_txid bigint NOT NULL,
        last_seq bigint NOT NULL,
        lease uuid NOT NULL,
        leased_until timestamptz(3) NOT NULL,
        PRIMARY KEY (tenant_id, id),
        FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE,
        CHECK ((last_txid, last_seq) > (after_txid, after_seq))
      );
      CREATE INDEX webhook_segments_expiry ON webhook_segments (tenant_id, webhook_id, leased_until);
      ${tenantPolicy('webhook_segments', 'SELECT, INSERT, UPDATE, DELETE')}

      CREATE OR REPLACE FUNCTION webhooks_with_events(max_rows integer) RETURNS TABLE (tenant_id uuid, webhook_id uuid)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
      AS $$
        SELECT w.tenant_id, w.id FROM webhooks w
         WHERE w.is_active
           AND (EXISTS (SELECT 1 FROM events e
                         WHERE e.tenant_id = w.tenant_id AND (e.txid, e.seq) > (w.feed_txid, w.feed_seq)
                           AND e.txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint)
                OR EXISTS (SELECT 1 FROM webhook_segments s
                            WHERE s.tenant_id = w.tenant_id AND s.webhook_id = w.id AND s.leased_until < now()))
         LIMIT max_rows
      $$;
      REVOKE ALL ON FUNCTION webhooks_with_events(integer) FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION webhooks_with_events(integer) TO ${APP_ROLE};
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION webhooks_with_events(max_rows integer) RETURNS TABLE (tenant_id uuid, webhook_id uuid)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
      AS $$
        SELECT w.tenant_id, w.id FROM webhooks w
         WHERE w.is_active
           AND EXISTS (SELECT 1 FROM events e
                        WHERE e.tenant_id = w.tenant_id AND (e.txid, e.seq) > (w.feed_txid, w.feed_seq)
                          AND e.txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint)
         LIMIT max_rows
      $$;
      DROP TABLE webhook_segments;
    `);
  }
}
