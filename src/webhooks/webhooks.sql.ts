import { EntityManager } from 'typeorm';
import { GENERIC, PREPARED, query, raw, sql } from '../database/sql';
import { typeCondition } from '../events/events.sql';

/** Active webhooks, of any tenant, with feed events after their position (webhooks_with_events, SECURITY DEFINER). */
export const webhooksWithEvents = (m: EntityManager, maxRows: number): Promise<Array<{ tenant_id: string; webhook_id: string }>> =>
  query(m, sql`SELECT tenant_id, webhook_id FROM webhooks_with_events(${maxRows}::int)`);

/** Tenants with due, unleased attempts of active webhooks (webhook_tenants_due, SECURITY DEFINER). */
export const tenantsWithDueAttempts = (m: EntityManager, maxRows: number): Promise<Array<{ tenant_id: string }>> =>
  query(m, sql`SELECT tenant_id FROM webhook_tenants_due(${maxRows}::int)`);

/** A webhook whose feed is being leased: its position, types, target and secret, and whether a segment of it was left by a process that died. */
export interface FeedingWebhook {
  feed_txid: string;
  feed_seq: string;
  types: string[];
  url: string;
  secret_ciphertext: string;
  expired: boolean;
}

/**
 * The webhook, locked while this process leases a segment of its feed; none when it is inactive, gone, or
 * another process is leasing one right now (SKIP LOCKED: one lease at a time per webhook). NO KEY UPDATE:
 * the foreign-key checks of attempts and segments being written (KEY SHARE) neither wait for it nor make
 * it skip the webhook. `expired`: one of its segments' lease has run out.
 */
export const lockForLease = (m: EntityManager, tenantId: string, webhookId: string): Promise<FeedingWebhook[]> =>
  query(
    m,
    sql`SELECT w.feed_txid, w.feed_seq, w.types, w.url, w.secret_ciphertext,
               EXISTS (SELECT 1 FROM webhook_segments s WHERE s.tenant_id = w.tenant_id AND s.webhook_id = w.id AND s.leased_until < now()) AS expired
          FROM webhooks w
         WHERE w.tenant_id = ${tenantId} AND w.id = ${webhookId} AND w.is_active
           FOR NO KEY UPDATE OF w SKIP LOCKED`,
    GENERIC,
  );

/** A feed position: after the event (`txid`, `seq`). */
export interface FeedPosition {
  txid: string;
  seq: string;
}

/**
 * A feed row as a segment reads it: its position, and, when the event is of the webhook's types, its id,
 * type, occurredAt and `body`, the event's JSON as GET /v1/events shows it (built by the database: the
 * service's event loop neither parses the event's data nor serializes it again).
 */
export interface SegmentRow {
  txid: string;
  seq: string;
  /** Null: not of the webhook's types (the segment passes it by). */
  id: string | null;
  type: string;
  occurred_at: Date;
  body: string | null;
}

/** A feed row of the webhook's types: a segment's event. */
export type SegmentEvent = SegmentRow & { id: string; body: string };
export const isSegmentEvent = (e: SegmentRow): e is SegmentEvent => e.id !== null;

/** A column's JSON text (`null` for NULL). */
const json = (column: string) => `coalesce(to_json(${column})::text, 'null')`;
/**
 * An event's JSON as the feed shows it (eventView in events.service.ts, with Date's toJSON: milliseconds,
 * UTC), its data as the database writes jsonb. The webhook specs compare each body with GET /v1/events.
 */
const EVENT_JSON = raw(`'{"id":' || ${json('e.id')} || ',"type":' || ${json('e.type')}
       || ',"occurredAt":' || to_json(to_char(e.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text
       || ',"action":' || ${json('e.action')} || ',"subject":{"type":' || ${json('e.subject_type')} || ',"id":' || ${json('e.subject_id')}
       || '},"data":' || coalesce(e.data::text, 'null') || '}'`);

/**
 * Up to `limit` events of the tenant's feed after `after`, below the feed's horizon (as readFeed reads
 * it), in feed order; those of the `exact` types or type `prefixes` (none: every type) with their bodies.
 */
export const readSegmentFeed = (m: EntityManager, tenantId: string, after: FeedPosition, filter: { exact: string[]; prefixes: string[] }, limit: number): Promise<SegmentRow[]> =>
  query(
    m,
    sql`SELECT e.txid, e.seq, CASE WHEN e.wanted THEN e.id END AS id, e.type, e.occurred_at, CASE WHEN e.wanted THEN ${EVENT_JSON} END AS body
          FROM (SELECT e.*, ${typeCondition(filter)} AS wanted
                  FROM events e
                 WHERE e.tenant_id = ${tenantId} AND (e.txid, e.seq) > (${after.txid}::bigint, ${after.seq}::bigint)
                   AND e.txid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint
                 ORDER BY e.txid, e.seq
                 LIMIT ${limit}) e
         ORDER BY e.txid, e.seq`,
    PREPARED,
  );

/** A leased segment of a webhook's feed: its events are those after `after` up to `last`. */
export interface LeasedSegment {
  id: string;
  lease: string;
  after: FeedPosition;
  last: FeedPosition;
}

const segmentOf = (r: { id: string; lease: string; after_txid: string; after_seq: string; last_txid: string; last_seq: string }): LeasedSegment => ({
  id: r.id,
  lease: r.lease,
  after: { txid: r.after_txid, seq: r.after_seq },
  last: { txid: r.last_txid, seq: r.last_seq },
});

/** One of the webhook's segments whose lease ran out (its process died), leased anew; none when another process took it first. */
export async function leaseExpiredSegment(m: EntityManager, tenantId: string, webhookId: string, leaseSeconds: number): Promise<LeasedSegment | undefined> {
  const rows = await query(
    m,
    // A SELECT at the top: a statement that is an UPDATE answers [rows, count] through TypeORM.
    sql`WITH leased AS (
          UPDATE webhook_segments s SET lease = gen_random_uuid(), leased_until = now() + make_interval(secs => ${leaseSeconds}::int)
            FROM (SELECT x.id FROM webhook_segments x
                   WHERE x.tenant_id = ${tenantId} AND x.webhook_id = ${webhookId} AND x.leased_until < now()
                   LIMIT 1 FOR UPDATE SKIP LOCKED) e
           WHERE s.tenant_id = ${tenantId} AND s.id = e.id
          RETURNING s.id, s.lease, s.after_txid, s.after_seq, s.last_txid, s.last_seq)
        SELECT * FROM leased`,
    GENERIC,
  );
  return rows[0] && segmentOf(rows[0]);
}

/**
 * Moves the webhook's feed position from `after` to `last` and, with `leased`, leases the segment between
 * them (its events are this process's to send); without, the events between were none of the webhook's types.
 */
export async function leaseNewSegment(
  m: EntityManager,
  tenantId: string,
  webhookId: string,
  range: { after: FeedPosition; last: FeedPosition },
  leased: boolean,
  leaseSeconds: number,
): Promise<LeasedSegment | undefined> {
  const rows = await query(
    m,
    sql`WITH moved AS (
          UPDATE webhooks SET feed_txid = ${range.last.txid}::bigint, feed_seq = ${range.last.seq}::bigint
           WHERE tenant_id = ${tenantId} AND id = ${webhookId}
          RETURNING id)
        INSERT INTO webhook_segments (tenant_id, id, webhook_id, after_txid, after_seq, last_txid, last_seq, lease, leased_until)
        SELECT ${tenantId}::uuid, gen_random_uuid(), moved.id, ${range.after.txid}::bigint, ${range.after.seq}::bigint,
               ${range.last.txid}::bigint, ${range.last.seq}::bigint, gen_random_uuid(), now() + make_interval(secs => ${leaseSeconds}::int)
          FROM moved WHERE ${leased}::boolean
        RETURNING id, lease, after_txid, after_seq, last_txid, last_seq`,
    GENERIC,
  );
  return rows[0] && segmentOf(rows[0]);
}

/** An attempt as it is recorded: made (delivered or failed), a retry it scheduled, or a first attempt not made (pending). */
export interface AttemptRecord {
  eventId: string;
  eventType: string;
  occurredAt: Date;
  attempt: number;
  status: 'pending' | 'delivered' | 'failed';
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  attemptedAt: Date | null;
  nextAttemptAt: Date | null;
  /** The event's JSON, kept on a pending attempt only. */
  body: string | null;
}

/**
 * Ends a leased segment: deletes it, only while the lease is still this process's, and inserts its attempts
 * (`records`) as they ended, in one statement; after a 410 (`gone`) the webhook is turned off. A pending
 * record's row is listed after the attempt it follows (1 ms later). Returns whether it was recorded (not:
 * the lease ran out and the segment is another process's now, or the webhook was deleted).
 */
export async function recordSegment(m: EntityManager, tenantId: string, segment: LeasedSegment, records: AttemptRecord[], gone: boolean): Promise<boolean> {
  return insertAttempts(m, tenantId, segment, records, { end: true, gone });
}

/**
 * Records some of a segment's attempts while the rest are still in flight (failures whose retries would
 * otherwise wait for the segment's slowest answer), keeping the segment and its lease; only while the lease
 * is this process's. A segment leased again after its process died leaves out the events recorded so
 * (recordedEvents). Returns whether they were recorded.
 */
export function recordSegmentEarly(m: EntityManager, tenantId: string, segment: LeasedSegment, records: AttemptRecord[]): Promise<boolean> {
  return insertAttempts(m, tenantId, segment, records, { end: false, gone: false });
}

/** Which of `eventIds` have attempts recorded for the webhook (of a segment recorded early in part). */
export async function recordedEvents(m: EntityManager, tenantId: string, webhookId: string, eventIds: string[]): Promise<Set<string>> {
  if (!eventIds.length) return new Set();
  const rows: Array<{ event_id: string }> = await query(
    m,
    sql`SELECT DISTINCT event_id FROM webhook_deliveries
         WHERE tenant_id = ${tenantId} AND webhook_id = ${webhookId} AND event_id = ANY(${eventIds}::uuid[])`,
    GENERIC,
  );
  return new Set(rows.map((r) => r.event_id));
}

async function insertAttempts(m: EntityManager, tenantId: string, segment: LeasedSegment, records: AttemptRecord[], { end, gone }: { end: boolean; gone: boolean }): Promise<boolean> {
  const col = <T>(f: (r: AttemptRecord) => T) => records.map(f);
  const ours = end
    ? sql`DELETE FROM webhook_segments WHERE tenant_id = ${tenantId} AND id = ${segment.id} AND lease = ${segment.lease} RETURNING webhook_id`
    : sql`SELECT webhook_id FROM webhook_segments WHERE tenant_id = ${tenantId} AND id = ${segment.id} AND lease = ${segment.lease} FOR UPDATE`;
  const rows: Array<{ webhook_id: string }> = await query(
    m,
    sql`WITH seg AS (${ours}),
        ins AS (
          INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, occurred_at, attempt, status, response_status,
                                          response_body, error, attempted_at, next_attempt_at, body, created_at)
          SELECT ${tenantId}::uuid, seg.webhook_id, r.event_id, r.event_type, r.occurred_at, r.attempt, r.status, r.response_status,
                 r.response_body, r.error, r.attempted_at, r.next_attempt_at, r.body,
                 clock_timestamp() + CASE WHEN r.status = 'pending' AND r.attempt > 1 THEN interval '1 millisecond' ELSE interval '0' END
            FROM seg, unnest(${col((r) => r.eventId)}::uuid[], ${col((r) => r.eventType)}::text[], ${col((r) => r.occurredAt)}::timestamptz[],
                             ${col((r) => r.attempt)}::int[], ${col((r) => r.status)}::text[], ${col((r) => r.responseStatus)}::int[],
                             ${col((r) => r.responseBody)}::text[], ${col((r) => r.error)}::text[], ${col((r) => r.attemptedAt)}::timestamptz[],
                             ${col((r) => r.nextAttemptAt)}::timestamptz[], ${col((r) => r.body)}::text[])
                 AS r(event_id, event_type, occurred_at, attempt, status, response_status, response_body, error, attempted_at, next_attempt_at, body)
          ON CONFLICT DO NOTHING),
        off AS (
          UPDATE webhooks SET is_active = false, updated_at = now()
           WHERE ${gone}::boolean AND tenant_id = ${tenantId} AND id IN (SELECT webhook_id FROM seg))
        SELECT webhook_id FROM seg`,
    GENERIC,
  );
  return rows.length > 0;
}

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
 * Whether this transaction may claim the tenant's due attempts now: claims of a tenant take turns (a
 * transaction-level advisory lock, released at COMMIT). A claim counts the leased attempts as its statement
 * starts, so two claims at once would each count without the other's leases and together exceed the
 * tenant's and a webhook's bounds. False: another process is claiming for the tenant; skip it this time.
 */
export async function claimTurn(m: EntityManager, tenantId: string): Promise<boolean> {
  const [{ turn }]: Array<{ turn: boolean }> = await query(m, sql`SELECT pg_try_advisory_xact_lock(hashtextextended('webhook-claims:' || ${tenantId}, 0)) AS turn`);
  return turn;
}

/** An attempt (`p`) that is due and that no claim holds: pending, its time come, its lease (if any) run out. */
const DUE_UNLEASED = raw(`p.status = 'pending' AND p.next_attempt_at <= now() AND (p.locked_until IS NULL OR p.locked_until < now())`);

/**
 * Claims up to `max` due attempts of the tenant's active webhooks, oldest due first, and no more than keep
 * the tenant's leased attempts (of every process) within `tenantMax` and each webhook's within `webhookMax`
 * — counting, for a webhook, its leased attempts and `busy` (this process's senders of its feed, which have
 * no lease rows) —: so a slow receiver's backlog leaves its tenant's other webhooks a slot. Each gets a
 * lease (`lease`, until now + `leaseSeconds`). Rows another transaction is claiming are skipped (SKIP
 * LOCKED), so an attempt is claimed by one process; a lease that runs out (its process died) makes it due
 * again.
 */
export const claimDueAttempts = (
  m: EntityManager,
  tenantId: string,
  limits: { max: number; tenantMax: number; webhookMax: number; busy: ReadonlyMap<string, number> },
  leaseSeconds: number,
): Promise<ClaimedAttempt[]> =>
  query(
    m,
    // Key look-ups only (a generic plan): the leased ones counted by webhook_deliveries_leased, then per
    // active webhook of the tenant (at most 20) its due ones in order by webhook_deliveries_due_by_webhook,
    // up to its room (and the claim's), locked there (rows a claim took and the total's LIMIT left are
    // unlocked at its commit, right after); each claimed row updated by its primary key. The counts are
    // exact because claims of a tenant take turns (claimTurn, before this statement).
    sql`WITH leased AS MATERIALIZED (
          SELECT f.webhook_id, count(*)::int AS n FROM webhook_deliveries f
           WHERE f.tenant_id = ${tenantId} AND f.status = 'pending' AND f.locked_until IS NOT NULL AND f.locked_until >= now()
           GROUP BY f.webhook_id),
        room AS MATERIALIZED (
          SELECT GREATEST(0, LEAST(${limits.max}::int, ${limits.tenantMax}::int - coalesce(sum(l.n), 0)::int)) AS n FROM leased l),
        busy AS (SELECT * FROM unnest(${[...limits.busy.keys()]}::uuid[], ${[...limits.busy.values()]}::int[]) AS b(webhook_id, n)),
        pick AS MATERIALIZED (
          SELECT c.id FROM webhooks w
           CROSS JOIN LATERAL (
             SELECT p.id, p.next_attempt_at FROM webhook_deliveries p
              WHERE p.tenant_id = w.tenant_id AND p.webhook_id = w.id AND ${DUE_UNLEASED}
              ORDER BY p.next_attempt_at
              LIMIT GREATEST(0, LEAST((SELECT r.n FROM room r),
                                      ${limits.webhookMax}::int - coalesce((SELECT l.n FROM leased l WHERE l.webhook_id = w.id), 0)
                                      - coalesce((SELECT b.n FROM busy b WHERE b.webhook_id = w.id), 0)))
                FOR UPDATE OF p SKIP LOCKED) c
           WHERE w.tenant_id = ${tenantId} AND w.is_active
           ORDER BY c.next_attempt_at
           LIMIT (SELECT r.n FROM room r)),
        claimed AS (
          UPDATE webhook_deliveries d
             SET locked_until = now() + make_interval(secs => ${leaseSeconds}::int), lease = gen_random_uuid()
            FROM pick WHERE d.tenant_id = ${tenantId} AND d.id = pick.id
          RETURNING d.id, d.webhook_id, d.event_id, d.event_type, d.occurred_at, d.attempt, d.body, d.lease)
        SELECT c.*, w.url, w.secret_ciphertext FROM claimed c JOIN webhooks w ON w.tenant_id = ${tenantId} AND w.id = c.webhook_id`,
    GENERIC,
  );

/**
 * Of the tenant's webhooks `ids` (those whose feed this process is sending, which hold their room), the ones
 * with a due attempt no claim has leased: their retries wait for room their feed holds.
 */
export const webhooksWithDueAttempts = (m: EntityManager, tenantId: string, ids: string[]): Promise<Array<{ webhook_id: string }>> =>
  query(
    m,
    sql`SELECT w.id AS webhook_id FROM unnest(${ids}::uuid[]) AS w(id)
         WHERE EXISTS (SELECT 1 FROM webhook_deliveries p
                        WHERE p.tenant_id = ${tenantId} AND p.webhook_id = w.id AND ${DUE_UNLEASED})`,
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
          INSERT INTO webhook_deliveries (tenant_id, webhook_id, event_id, event_type, occurred_at, attempt, status, next_attempt_at, body)
          SELECT tenant_id, webhook_id, event_id, event_type, occurred_at, attempt + 1, 'pending', next_attempt_at, body
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
export const currentFeedPosition = async (m: EntityManager): Promise<FeedPosition> => {
  const [row]: Array<{ txid: string }> = await query(m, sql`SELECT pg_current_xact_id()::text AS txid`);
  return { txid: row.txid, seq: '0' };
};
