import { MigrationInterface, QueryRunner } from 'typeorm';
import { APP_ROLE } from './lib/rls';

/** prune_events as 1763780000011-Events wrote it, with or without the horizon's condition. */
const pruneEvents = (belowHorizon: boolean) => `
  CREATE OR REPLACE FUNCTION prune_events(cutoff timestamptz, max_rows integer) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
  AS $$
  DECLARE
    n integer;
  BEGIN
    WITH d AS (
      DELETE FROM events e
       WHERE (e.tenant_id, e.id) IN (SELECT o.tenant_id, o.id FROM events o WHERE o.occurred_at < cutoff
                                     ${belowHorizon ? 'AND o.txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint' : ''}
                                     LIMIT max_rows)
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
`;

/**
 * The retention job deletes only events below the feed's horizon (every transaction older than it has
 * ended). A read of the feed without a cursor starts after the newest deleted position (`event_prunes`),
 * so that the cursor it hands out has missed no deleted event; that position must then be below the
 * horizon of every later read, or a transaction still running below it could commit an event the reader
 * would never see. Only a transaction open for longer than the retention could hold an old event above the
 * horizon; it is deleted once that transaction has ended.
 */
export class PruneBelowHorizon1763780000020 implements MigrationInterface {
  name = 'PruneBelowHorizon1763780000020';

  async up(q: QueryRunner): Promise<void> {
    await q.query(pruneEvents(true));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(pruneEvents(false));
  }
}
