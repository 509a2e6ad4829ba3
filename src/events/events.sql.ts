import { EntityManager } from 'typeorm';
import { GENERIC, PREPARED, query, raw, Sql, sql } from '../database/sql';

/** A timestamp column as the API prints it (Date#toISOString: UTC, milliseconds, `Z`). */
export const isoText = (column: string) => raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

/**
 * The events of one posting, as a CTE (`, posting_events AS (…)`, to follow the posting statement's last CTE): `transaction.posted`
 * (data: the transaction as its GET returns it — `view` is that answer without `txnNo` and `postedAt`,
 * which the header CTE `h` supplies) and one `stock.changed` per balance key, from `changes`: a SELECT of
 * `item_id, facility_id, location_id, lot_id, status_id, qty_delta, first_line, qty_on_hand, qty_allocated`
 * (the quantities after the change; `first_line`, the key's first line number, orders them as the lines).
 * `h` must return `id, txn_no, type, posted_at`; no row in `h`, no events.
 */
export const postingEventsCte = (tenantId: string, view: object, changes: Sql): Sql => sql`,
posting_events AS (
  INSERT INTO events (tenant_id, type, action, subject_type, subject_id, data)
  SELECT ${tenantId}::uuid, 'transaction.posted', h.type, 'transaction', h.id,
         ${JSON.stringify(view)}::jsonb || jsonb_build_object('txnNo', h.txn_no, 'postedAt', ${isoText('h.posted_at')})
    FROM h
  UNION ALL
  (SELECT ${tenantId}::uuid, 'stock.changed', h.type, 'item', s.item_id,
          jsonb_build_object('itemId', s.item_id, 'facilityId', s.facility_id, 'locationId', s.location_id, 'lotId', s.lot_id, 'statusId', s.status_id,
                             'qtyDelta', s.qty_delta, 'qtyOnHand', s.qty_on_hand, 'qtyAllocated', s.qty_allocated,
                             'transactionId', h.id, 'txnNo', h.txn_no, 'transactionType', h.type)
     FROM h, (${changes}) s
    ORDER BY s.first_line))`;

/** One `<resource>.<created|updated>` event, written in the unit of work of the change. */
export function insertEvent(
  m: EntityManager,
  tenantId: string,
  e: { type: string; action: string; subjectType: string; subjectId: string; data: string },
): Promise<unknown> {
  return query(
    m,
    sql`INSERT INTO events (tenant_id, type, action, subject_type, subject_id, data)
        VALUES (${tenantId}, ${e.type}, ${e.action}, ${e.subjectType}, ${e.subjectId}, ${e.data}::jsonb)`,
    // generic: it follows the ledger's statements (which run generic) without switching the plan mode back
    GENERIC,
  );
}

/** A feed position: the writing transaction's id and the event's sequence number. */
export interface FeedPosition {
  txid: string;
  seq: string;
}

/** An event as the feed reads it. */
export interface EventRow extends FeedPosition {
  id: string;
  type: string;
  action: string;
  subject_type: string;
  subject_id: string;
  data: unknown;
  occurred_at: Date;
}

/** One read of the feed: its events, and the position the read covered (the next read starts after it). */
export interface FeedRead {
  /** The retention job deleted events after the cursor: the reader has missed them (410). */
  expired: boolean;
  events: EventRow[];
  next: FeedPosition;
}

/** Whether event `e` is of the `exact` types or type `prefixes` (both empty: every type), as an SQL condition. */
export const typeCondition = (filter: { exact: string[]; prefixes: string[] }) =>
  sql`(${!filter.exact.length && !filter.prefixes.length}::boolean OR e.type = ANY(${filter.exact}::text[])
       OR EXISTS (SELECT 1 FROM unnest(${filter.prefixes}::text[]) AS f(prefix) WHERE starts_with(e.type, f.prefix)))`;

/** The newest position the retention job deleted of the tenant's feed, or the feed's very start. */
export async function prunedTo(m: EntityManager, tenantId: string): Promise<FeedPosition> {
  const [row]: FeedPosition[] = await query(m, sql`SELECT p.txid, p.seq FROM event_prunes p WHERE p.tenant_id = ${tenantId}`, PREPARED);
  return row ?? { txid: '0', seq: '0' };
}

/** A row of `readFeed`'s statement: the tenant's pruned-to position, the last position read, and one event of the page (or none). */
type FeedReadRow = { expired: boolean; pruned_txid: string; pruned_seq: string; read_txid: string | null; read_seq: string | null } & {
  [K in keyof EventRow]: EventRow[K] | null;
};

/**
 * A page of the feed after `from`, in (txid, seq) order, only events of transactions older than every
 * transaction still running (the snapshot's xmin): those have all ended, so whatever commits later has a
 * txid at or above the horizon, past every position the read covers.
 *
 * It reads up to `range.read` events after `from` and answers those of the `exact` types or type
 * `prefixes` (empty: all types), at most `range.limit` of them. `next` is the position the read covered:
 * the page's last event when the page is full, else the last event read (those after the page's last did
 * not match), else `from` — so a filter that matches little does not make every poll read the same events
 * again, and one read's work is bounded by `range.read`. (`from` is a parameter, not computed in the
 * statement, so that the planner estimates the range from the statistics and walks the feed's index in
 * order up to the limit, rather than reading the whole range and sorting it.)
 *
 * Retention (`event_prunes`, the newest position the job deleted): a `cursor` it has passed has missed
 * deleted events (`expired`, nothing read). A read from the start (`cursor` false) starts at that position
 * (prunedTo) and answers nothing at or below the position as this statement sees it — the job may have
 * deleted more in between — nor hands back a `next` below it: so no position it hands out has already
 * missed a deleted event.
 */
export async function readFeed(
  m: EntityManager,
  tenantId: string,
  from: FeedPosition & { cursor: boolean },
  filter: { exact: string[]; prefixes: string[] },
  range: { limit: number; read: number },
): Promise<FeedRead> {
  const rows: FeedReadRow[] = await query(
    m,
    sql`WITH x AS (
          SELECT coalesce(p.txid, 0) AS txid, coalesce(p.seq, 0) AS seq,
                 ${from.cursor}::boolean AND coalesce((p.txid, p.seq) > (${from.txid}::bigint, ${from.seq}::bigint), false) AS expired,
                 pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon
            FROM (VALUES (1)) one LEFT JOIN event_prunes p ON p.tenant_id = ${tenantId}),
        scan AS (
          SELECT e.txid, e.seq, (e.txid, e.seq) > (x.txid, x.seq) AND ${typeCondition(filter)} AS wanted
            FROM x JOIN LATERAL (
              SELECT e.txid, e.seq, e.type FROM events e
               WHERE e.tenant_id = ${tenantId} AND (e.txid, e.seq) > (${from.txid}::bigint, ${from.seq}::bigint) AND e.txid < x.horizon
               ORDER BY e.txid, e.seq
               LIMIT ${range.read}) e ON NOT x.expired),
        page AS (
          SELECT s.txid, s.seq FROM scan s WHERE s.wanted ORDER BY s.txid, s.seq LIMIT ${range.limit})
        SELECT x.expired, x.txid AS pruned_txid, x.seq AS pruned_seq, r.txid AS read_txid, r.seq AS read_seq,
               e.id, e.txid, e.seq, e.type, e.action, e.subject_type, e.subject_id, e.data, e.occurred_at
          FROM x
          LEFT JOIN (SELECT s.txid, s.seq FROM scan s ORDER BY s.txid DESC, s.seq DESC LIMIT 1) r ON true
          LEFT JOIN (page p JOIN events e ON e.tenant_id = ${tenantId} AND e.txid = p.txid AND e.seq = p.seq) ON true
         ORDER BY e.txid, e.seq`,
    PREPARED,
  );
  const [first] = rows;
  const events = rows.filter((r): r is FeedReadRow & EventRow => r.id !== null);
  const pruned = { txid: first.pruned_txid, seq: first.pruned_seq };
  return { expired: first.expired, events, next: later(coveredTo(first, events, from, range.limit), pruned) };
}

/** Where a read ended: at the page's last event when it is full, else at the last event read, else where it started. */
function coveredTo(row: FeedReadRow, events: EventRow[], from: FeedPosition, limit: number): FeedPosition {
  const last = events[events.length - 1];
  if (last && events.length === limit) return { txid: last.txid, seq: last.seq };
  if (row.read_txid !== null && row.read_seq !== null) return { txid: row.read_txid, seq: row.read_seq };
  return { txid: from.txid, seq: from.seq };
}

/** The later of two feed positions. */
function later(a: FeedPosition, b: FeedPosition): FeedPosition {
  const [at, bt] = [BigInt(a.txid), BigInt(b.txid)];
  return at > bt || (at === bt && BigInt(a.seq) >= BigInt(b.seq)) ? a : b;
}

/** Deletes up to `maxRows` events older than `cutoff`, across tenants (prune_events); returns how many. */
export async function pruneEvents(m: EntityManager, cutoff: Date, maxRows: number): Promise<number> {
  const [row]: Array<{ n: number }> = await query(m, sql`SELECT prune_events(${cutoff}::timestamptz, ${maxRows}::int) AS n`);
  return row?.n ?? 0;
}

/**
 * Events of one kind for the records `records` selects (`subject_id`, `data` jsonb) — for a change that
 * no request answers with (the expiry job's released reservations), written by the statement of its owner.
 */
export const recordEventsSql = (tenantId: string, kind: { type: string; action: string; subjectType: string }, records: Sql): Sql =>
  sql`INSERT INTO events (tenant_id, type, action, subject_type, subject_id, data)
      SELECT ${tenantId}::uuid, ${kind.type}, ${kind.action}, ${kind.subjectType}, x.subject_id, x.data FROM (${records}) x`;
