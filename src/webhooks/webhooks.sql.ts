import { EntityManager } from 'typeorm';
import { GENERIC, query, sql } from '../database/sql';

/** Active webhooks, of any tenant, with feed events after their position (webhooks_with_events, SECURITY DEFINER). */
export const webhooksWithEvents = (m: EntityManager, maxRows: number): Promise<Array<{ tenant_id: string; webhook_id: string }>> =>
  query(m, sql`SELECT tenant_id, webhook_id FROM webhooks_with_events(${maxRows}::int)`);

/** Tenants with due, unleased attempts of active webhooks (webhook_tenants_due, SECURITY DEFINER). */
export const tenantsWithDueAttempts = (m: EntityManager, maxRows: number): Promise<Array<{ tenant_id: string }>> =>
  query(m, sql`SELECT tenant_id FROM webhook_tenants_due(${maxRows}::int)`);

/**
 * The webhook's feed position and types, locked for this fan-out; none when it is inactive, gone, or
 * another process is fanning it out right now (SKIP LOCKED: one fan-out per webhook at a time).
 */
export const lockForFanOut = (m: EntityManager, tenantId: string, webhookId: string): Promise<Array<{ feed_txid: string; feed_seq: string; types: string[] }>> =>
  query(
    m,
    sql`SELECT feed_txid, feed_seq, types FROM webhooks
         WHERE tenant_id = ${tenantId} AND id = ${webhookId} AND is_active
         FOR UPDATE SKIP LOCKED`,
  );

/** A pending first attempt per event (`events`: eventId, eventType, occurredAt, body), then the webhook's new feed position. */
export const enqueueEvents = (
  m: EntityManager,
  tenantId: string,
  webhookId: string,
  events: Array<{ eventId: string; eventType: string; occurredAt: Date; body: string }>,
  position: { txid: string; seq: string },
): Promise<unknown> =>
  query(
    m,
    sql`WITH queued AS (
          INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event_id, event_type, occurred_at, attempt, status, next_attempt_at, body)
          SELECT ${tenantId}::uuid, gen_random_uuid(), ${webhookId}::uuid, e."eventId", e."eventType", e."occurredAt", 1, 'pending', now(), e.body
            FROM jsonb_to_recordset(${JSON.stringify(events)}::jsonb) AS e("eventId" uuid, "eventType" text, "occurredAt" timestamptz, body text)
          ON CONFLICT DO NOTHING)
        UPDATE webhooks SET feed_txid = ${position.txid}::bigint, feed_seq = ${position.seq}::bigint
         WHERE tenant_id = ${tenantId} AND id = ${webhookId}`,
  );

export interface ClaimedAttempt {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  occurred_at: Date;
  attempt: number;
  body: string;
  lease: string;
  url: string;
  secret_ciphertext: string;
}

/**
 * Claims up to `max` due attempts of the tenant's active webhooks, oldest due first, and no more than keep
 * the tenant's leased attempts (of every process) within `tenantMax`: each gets a lease (`lease`, until
 * now + `leaseSeconds`). Rows another transaction is claiming are skipped (SKIP LOCKED), so an attempt is
 * claimed by one process; a lease that runs out (its process died) makes it due again.
 */
export const claimDueAttempts = (m: EntityManager, tenantId: string, max: number, tenantMax: number, leaseSeconds: number): Promise<ClaimedAttempt[]> =>
  query(
    m,
    // Key look-ups only (a generic plan): the due ones by webhook_deliveries_due in order, the leased ones
    // counted by webhook_deliveries_leased, each claimed row updated by its primary key.
    sql`WITH pick AS MATERIALIZED (
          SELECT p.id FROM webhook_deliveries p
           WHERE p.tenant_id = ${tenantId} AND p.status = 'pending' AND p.next_attempt_at <= now()
             AND (p.locked_until IS NULL OR p.locked_until < now())
             AND EXISTS (SELECT 1 FROM webhooks pw WHERE pw.tenant_id = p.tenant_id AND pw.id = p.webhook_id AND pw.is_active)
           ORDER BY p.next_attempt_at
           LIMIT GREATEST(0, LEAST(${max}::int, ${tenantMax}::int - (
             SELECT count(*)::int FROM webhook_deliveries f
              WHERE f.tenant_id = ${tenantId} AND f.status = 'pending' AND f.locked_until IS NOT NULL AND f.locked_until >= now())))
             FOR UPDATE OF p SKIP LOCKED),
        claimed AS (
          UPDATE webhook_deliveries d
             SET locked_until = now() + make_interval(secs => ${leaseSeconds}::int), lease = gen_random_uuid()
            FROM pick WHERE d.tenant_id = ${tenantId} AND d.id = pick.id
          RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.occurred_at, d.attempt, d.body, d.lease)
        SELECT c.*, w.url, w.secret_ciphertext FROM claimed c JOIN webhooks w ON w.tenant_id = ${tenantId} AND w.id = c.webhook_id`,
    GENERIC,
  );

export interface AttemptOutcome {
  status: 'delivered' | 'failed';
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  attemptedAt: Date;
  /** When the next attempt is due (a retry is scheduled), else null. */
  nextAttemptAt: Date | null;
  /** The receiver answered 410 Gone: the webhook is turned off. */
  gone: boolean;
}

/**
 * Records claimed attempts' outcomes (`records`, each its attempt and outcome), in one statement: each only
 * while the claim's lease is still ours, with, for each recorded one, its next attempt (a new pending row)
 * and, after a 410, its webhook turned off. Returns the ids of the attempts recorded (one missing: its
 * lease ran out and the attempt is another process's now, or the webhook was deleted).
 */
export async function finishAttempts(m: EntityManager, tenantId: string, records: Array<{ a: ClaimedAttempt; o: AttemptOutcome }>): Promise<Set<string>> {
  const col = <T>(f: (r: { a: ClaimedAttempt; o: AttemptOutcome }) => T) => records.map(f);
  const rows: Array<{ id: string }> = await query(
    m,
    sql`WITH o AS (
          SELECT * FROM unnest(${col((r) => r.a.id)}::uuid[], ${col((r) => r.a.lease)}::uuid[], ${col((r) => r.o.status)}::text[],
                               ${col((r) => r.o.responseStatus)}::int[], ${col((r) => r.o.responseBody)}::text[], ${col((r) => r.o.error)}::text[],
                               ${col((r) => r.o.attemptedAt)}::timestamptz[], ${col((r) => r.o.nextAttemptAt)}::timestamptz[],
                               ${col((r) => r.o.gone)}::boolean[], ${col((r) => r.a.body)}::text[])
                 AS o(id, lease, status, response_status, response_body, error, attempted_at, next_attempt_at, gone, body)),
        done AS (
          UPDATE webhook_deliveries d
             SET status = o.status, response_status = o.response_status, response_body = o.response_body, error = o.error,
                 attempted_at = o.attempted_at, next_attempt_at = o.next_attempt_at, body = NULL, locked_until = NULL, lease = NULL
            FROM o
           WHERE d.tenant_id = ${tenantId} AND d.id = o.id AND d.lease = o.lease AND d.status = 'pending'
          RETURNING d.id, d.tenant_id, d.webhook_id, d.event_id, d.event_type, d.occurred_at, d.attempt, o.next_attempt_at, o.gone, o.body),
        retry AS (
          INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event_id, event_type, occurred_at, attempt, status, next_attempt_at, body)
          SELECT tenant_id, gen_random_uuid(), webhook_id, event_id, event_type, occurred_at, attempt + 1, 'pending', next_attempt_at, body
            FROM done WHERE next_attempt_at IS NOT NULL
          ON CONFLICT DO NOTHING),
        off AS (
          UPDATE webhooks SET is_active = false, updated_at = now()
           WHERE tenant_id = ${tenantId} AND id IN (SELECT webhook_id FROM done WHERE gone))
        SELECT id FROM done`,
    GENERIC,
  );
  return new Set(rows.map((r) => r.id));
}

/** Serializes webhook creation within a tenant for the rest of the transaction (the per-tenant cap holds under concurrency). */
export const lockTenantWebhooks = (m: EntityManager, tenantId: string): Promise<unknown> =>
  query(m, sql`SELECT pg_advisory_xact_lock(hashtextextended('webhooks:' || ${tenantId}::text, 0))`);

/** A new webhook's feed position: after every event of transactions that started before this one. */
export const currentFeedPosition = async (m: EntityManager): Promise<{ txid: string; seq: string }> => {
  const [row]: Array<{ txid: string }> = await query(m, sql`SELECT pg_current_xact_id()::text AS txid`);
  return { txid: row.txid, seq: '0' };
};
