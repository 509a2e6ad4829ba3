import { MigrationInterface, QueryRunner } from 'typeorm';
import { APP_ROLE, tenantPolicy } from './lib/rls';

/**
 * Webhooks (CONTRACT §9): subscriptions and their delivery attempts.
 *
 * `webhooks`: the subscription, its secret encrypted with the service's key (AES-256-GCM, never in
 * clear text), and its position in the event feed (`feed_txid`, `feed_seq`): the fan-out step reads the
 * feed after it (below the horizon, as GET /v1/events does), writes a pending attempt per matching event
 * and moves the position, in one transaction.
 *
 * `webhook_deliveries`: one row per attempt. A `pending` row is the work queue itself: due at
 * `next_attempt_at`, claimed with FOR UPDATE SKIP LOCKED and a lease (`locked_until`, `lease`), so each
 * attempt is made by one service instance, and a crash (in flight or in backoff) loses nothing: the row
 * stays pending. Once attempted it becomes `delivered` or `failed`, and a retry is a new pending row
 * (attempt + 1). `body` (the event's JSON as the feed shows it) is kept only on the pending row.
 *
 * Work across tenants (which RLS hides from the service's role) is only found here: `webhooks_with_events`
 * and `webhook_tenants_due` (SECURITY DEFINER) name the tenants and webhooks with something to do; the
 * work itself runs in a unit of work of that tenant, under RLS.
 */
export class Webhooks1763780000013 implements MigrationInterface {
  name = 'Webhooks1763780000013';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks (
        tenant_id uuid NOT NULL REFERENCES tenants (tenant_id),
        id uuid NOT NULL,
        url text NOT NULL CHECK (char_length(url) <= 2000),
        types text[] NOT NULL DEFAULT '{}' CHECK (cardinality(types) <= 20),
        description text CHECK (char_length(description) <= 500),
        is_active boolean NOT NULL DEFAULT true,
        secret_ciphertext text NOT NULL,
        feed_txid bigint NOT NULL,
        feed_seq bigint NOT NULL,
        created_at timestamptz(3) NOT NULL DEFAULT now(),
        updated_at timestamptz(3) NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, id)
      );
      CREATE INDEX webhooks_list ON webhooks (tenant_id, created_at DESC, id DESC);
      ${tenantPolicy('webhooks', 'SELECT, INSERT, UPDATE, DELETE')}

      CREATE TABLE webhook_deliveries (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        webhook_id uuid NOT NULL,
        event_id uuid NOT NULL,
        event_type text NOT NULL,
        occurred_at timestamptz(3) NOT NULL,
        attempt integer NOT NULL CHECK (attempt >= 1),
        status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
        response_status integer,
        response_body text CHECK (octet_length(response_body) <= 1024),
        error text CHECK (char_length(error) <= 500),
        attempted_at timestamptz(3),
        next_attempt_at timestamptz(3),
        body text,
        locked_until timestamptz(3),
        lease uuid,
        created_at timestamptz(3) NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT webhook_deliveries_attempt_key UNIQUE (tenant_id, webhook_id, event_id, attempt),
        FOREIGN KEY (tenant_id, webhook_id) REFERENCES webhooks (tenant_id, id) ON DELETE CASCADE,
        CHECK (status <> 'pending' OR (body IS NOT NULL AND next_attempt_at IS NOT NULL))
      );
      CREATE INDEX webhook_deliveries_list ON webhook_deliveries (tenant_id, webhook_id, created_at DESC, id DESC);
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (tenant_id, next_attempt_at) WHERE status = 'pending';
      ${tenantPolicy('webhook_deliveries', 'SELECT, INSERT, UPDATE, DELETE')}

      -- Active webhooks with feed events after their position below the horizon (the fan-out's work).
      CREATE FUNCTION webhooks_with_events(max_rows integer) RETURNS TABLE (tenant_id uuid, webhook_id uuid)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
      AS $$
        SELECT w.tenant_id, w.id FROM webhooks w
         WHERE w.is_active
           AND EXISTS (SELECT 1 FROM events e
                        WHERE e.tenant_id = w.tenant_id AND (e.txid, e.seq) > (w.feed_txid, w.feed_seq)
                          AND e.txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint)
         LIMIT max_rows
      $$;
      -- Tenants with pending attempts of active webhooks that are due and not leased (the delivery step's
      -- work): the tenants with pending rows by a skip scan of the partial index, then whether one is due.
      CREATE FUNCTION webhook_tenants_due(max_rows integer) RETURNS TABLE (tenant_id uuid)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
      AS $$
        WITH RECURSIVE t AS (
          (SELECT d.tenant_id FROM webhook_deliveries d WHERE d.status = 'pending' ORDER BY d.tenant_id LIMIT 1)
          UNION ALL
          SELECT (SELECT d.tenant_id FROM webhook_deliveries d WHERE d.status = 'pending' AND d.tenant_id > t.tenant_id ORDER BY d.tenant_id LIMIT 1)
            FROM t WHERE t.tenant_id IS NOT NULL)
        SELECT t.tenant_id FROM t
         WHERE t.tenant_id IS NOT NULL
           AND EXISTS (SELECT 1 FROM webhook_deliveries d JOIN webhooks w ON w.tenant_id = d.tenant_id AND w.id = d.webhook_id AND w.is_active
                        WHERE d.tenant_id = t.tenant_id AND d.status = 'pending' AND d.next_attempt_at <= now()
                          AND (d.locked_until IS NULL OR d.locked_until < now()))
         LIMIT max_rows
      $$;
      REVOKE ALL ON FUNCTION webhooks_with_events(integer) FROM PUBLIC;
      REVOKE ALL ON FUNCTION webhook_tenants_due(integer) FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION webhooks_with_events(integer) TO ${APP_ROLE};
      GRANT EXECUTE ON FUNCTION webhook_tenants_due(integer) TO ${APP_ROLE};
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION webhook_tenants_due(integer);
      DROP FUNCTION webhooks_with_events(integer);
      DROP TABLE webhook_deliveries;
      DROP TABLE webhooks;
    `);
  }
}
