import { MigrationInterface, QueryRunner } from 'typeorm';
import { APP_ROLE, tenantPolicy } from './lib/rls';

/**
 * The event feed (CONTRACT §9): every change writes its events into `events` in its own transaction.
 *
 * Order and the horizon: `txid` is the writing transaction's id (`pg_current_xact_id()`, 64-bit, as
 * bigint) and `seq` a sequence number; the feed reads in (txid, seq) order and only events whose txid
 * is below the oldest transaction still running (`pg_snapshot_xmin(pg_current_snapshot())`), so an
 * event that commits later always lands after a cursor already handed out (docs/architecture.md).
 *
 * Retention: `prune_events(cutoff)` (SECURITY DEFINER: it works across tenants, which RLS hides from
 * the app role) deletes events older than the cutoff and records per tenant the newest position it
 * deleted (`event_prunes`); a cursor below that mark has missed events: 410 cursor_expired.
 */
export class Events1763780000011 implements MigrationInterface {
  name = 'Events1763780000011';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE events (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        txid bigint NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
        seq bigint GENERATED ALWAYS AS IDENTITY,
        type text NOT NULL CHECK (type ~ '^[a-z_]+\\.[a-z_]+$'),
        action text NOT NULL,
        subject_type text NOT NULL,
        subject_id uuid NOT NULL,
        data jsonb NOT NULL,
        occurred_at timestamptz(3) NOT NULL DEFAULT now(),
        -- the feed's order is the key: one B-tree per insert (nothing reads an event by id alone)
        CONSTRAINT events_feed PRIMARY KEY (tenant_id, txid, seq)
      );
      CREATE INDEX events_age ON events USING brin (occurred_at);
      ${tenantPolicy('events', 'SELECT, INSERT')}

      CREATE TABLE event_prunes (
        tenant_id uuid NOT NULL PRIMARY KEY,
        txid bigint NOT NULL,
        seq bigint NOT NULL,
        pruned_at timestamptz(3) NOT NULL DEFAULT now()
      );
      ${tenantPolicy('event_prunes', 'SELECT')}

      CREATE FUNCTION prune_events(cutoff timestamptz, max_rows integer) RETURNS integer
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
      AS $$
      DECLARE
        n integer;
      BEGIN
        WITH d AS (
          DELETE FROM events e
           WHERE (e.tenant_id, e.id) IN (SELECT o.tenant_id, o.id FROM events o WHERE o.occurred_at < cutoff LIMIT max_rows)
          RETURNING e.tenant_id, e.txid, e.seq),
        marks AS (
          SELECT DISTINCT ON (d.tenant_id) d.tenant_id, d.txid, d.seq FROM d ORDER BY d.tenant_id, d.txid DESC, d.seq DESC),
        up AS (
          INSERT INTO event_prunes AS p (tenant_id, txid, seq) SELECT * FROM marks
          ON CONFLICT (tenant_id) DO UPDATE SET txid = excluded.txid, seq = excluded.seq, pruned_at = now()
           WHERE (excluded.txid, excluded.seq) > (p.txid, p.seq))
        SELECT count(*) INTO n FROM d;
        RETURN n;
      END
      $$;
      REVOKE ALL ON FUNCTION prune_events(timestamptz, integer) FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION prune_events(timestamptz, integer) TO ${APP_ROLE};
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION prune_events(timestamptz, integer);
      DROP TABLE event_prunes;
      DROP TABLE events;
    `);
  }
}
