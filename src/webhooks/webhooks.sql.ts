import { EntityManager } from 'typeorm';
import { query, sql } from '../database/sql';

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
    // A WITH around the UPDATE: its rows come back as a SELECT's (an UPDATE's come as [rows, count]).
    sql`WITH claimed AS (
        UPDATE webhook_deliveries d
           SET locked_until = now() + make_interval(secs => ${leaseSeconds}::int), lease = gen_random_uuid()
          FROM webhooks w
         WHERE w.tenant_id = d.tenant_id AND w.id = d.webhook_id
           AND (d.tenant_id, d.id) IN (
             SELECT p.tenant_id, p.id FROM webhook_deliveries p
               JOIN webhooks pw ON pw.tenant_id = p.tenant_id AND pw.id = p.webhook_id AND pw.is_active
              WHERE p.tenant_id = ${tenantId} AND p.status = 'pending' AND p.next_attempt_at <= now()
                AND (p.locked_until IS NULL OR p.locked_until < now())
              ORDER BY p.next_attempt_at
              LIMIT GREATEST(0, LEAST(${max}::int, ${tenantMax}::int - (
                SELECT count(*)::int FROM webhook_deliveries f
                 WHERE f.tenant_id = ${tenantId} AND f.status = 'pending' AND f.locked_until >= now())))
              FOR UPDATE OF p SKIP LOCKED)
        RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.occurred_at, d.attempt, d.body, d.lease, w.url, w.secret_ciphertext)
        SELECT * FROM claimed`,
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
 * Records a claimed attempt's outcome — only while the claim's lease is still ours — and, in the same
 * statement, the next attempt (a new pending row) and, after a 410, the webhook turned off. Returns whether
 * the outcome was recorded (false: the lease ran out and the attempt is another process's now).
 */
export async function finishAttempt(m: EntityManager, tenantId: string, a: ClaimedAttempt, o: AttemptOutcome): Promise<boolean> {
  const [row]: Array<{ n: number }> = await query(
    m,
    sql`WITH done AS (
          UPDATE webhook_deliveries
             SET status = ${o.status}, response_status = ${o.responseStatus}::int, response_body = ${o.responseBody}, error = ${o.error},
                 attempted_at = ${o.attemptedAt}::timestamptz, next_attempt_at = ${o.nextAttemptAt}::timestamptz,
                 body = NULL, locked_until = NULL, lease = NULL
           WHERE tenant_id = ${tenantId} AND id = ${a.id} AND lease = ${a.lease}::uuid AND status = 'pending'
          RETURNING tenant_id, webhook_id, event_id, event_type, occurred_at, attempt),
        retry AS (
          INSERT INTO webhook_deliveries (tenant_id, id, webhook_id, event_id, event_type, occurred_at, attempt, status, next_attempt_at, body)
          SELECT tenant_id, gen_random_uuid(), webhook_id, event_id, event_type, occurred_at, attempt + 1, 'pending', ${o.nextAttemptAt}::timestamptz, ${a.body}
            FROM done WHERE ${o.nextAttemptAt}::timestamptz IS NOT NULL
          ON CONFLICT DO NOTHING),
        off AS (
          UPDATE webhooks SET is_active = false, updated_at = now()
           WHERE ${o.gone}::boolean AND tenant_id = ${tenantId} AND id IN (SELECT webhook_id FROM done))
        SELECT count(*)::int AS n FROM done`,
  );
  return (row?.n ?? 0) > 0;
}

/** Serializes webhook creation within a tenant for the rest of the transaction (the per-tenant cap holds under concurrency). */
export const lockTenantWebhooks = (m: EntityManager, tenantId: string): Promise<unknown> =>
  query(m, sql`SELECT pg_advisory_xact_lock(hashtextextended('webhooks:' || ${tenantId}::text, 0))`);

/** A new webhook's feed position: after every event of transactions that started before this one. */
export const currentFeedPosition = async (m: EntityManager): Promise<{ txid: string; seq: string }> => {
  const [row]: Array<{ txid: string }> = await query(m, sql`SELECT pg_current_xact_id()::text AS txid`);
  return { txid: row.txid, seq: '0' };
};
