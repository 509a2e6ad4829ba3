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

export interface EventRow {
  id: string | null;
  txid: string | null;
  seq: string | null;
  type: string | null;
  action: string | null;
  subject_type: string | null;
  subject_id: string | null;
  data: unknown;
  occurred_at: Date | null;
  expired: boolean;
}

/** Whether event `e` is of the `exact` types or type `prefixes` (both empty: every type), as an SQL condition. */
export const typeCondition = (filter: { exact: string[]; prefixes: string[] }) =>
  sql`(${!filter.exact.length && !filter.prefixes.length}::boolean OR e.type = ANY(${filter.exact}::text[])
       OR EXISTS (SELECT 1 FROM unnest(${filter.prefixes}::text[]) AS f(prefix) WHERE starts_with(e.type, f.prefix)))`;

/**
 * A page of the feed after position (`txid`, `seq`), in (txid, seq) order, only events of transactions
 * older than every transaction still running (the snapshot's xmin): those have all ended, so whatever
 * commits later has a txid at or above the horizon, past every position handed out. One row with only
 * `expired` set when nothing follows; `expired`: the retention job deleted events after the position
 * (asked only `fromCursor`: a feed read from the start has missed nothing).
 * `exact` types and type `prefixes` (empty: all types).
 */
export function readFeed(
  m: EntityManager,
  tenantId: string,
  after: { txid: string; seq: string; fromCursor: boolean },
  filter: { exact: string[]; prefixes: string[] },
  limit: number,
): Promise<EventRow[]> {
  return query(
    m,
    sql`WITH x AS (
          SELECT ${after.fromCursor}::boolean AND EXISTS (SELECT 1 FROM event_prunes p WHERE p.tenant_id = ${tenantId} AND (p.txid, p.seq) > (${after.txid}::bigint, ${after.seq}::bigint)) AS expired,
                 pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS horizon)
        SELECT e.id, e.txid, e.seq, e.type, e.action, e.subject_type, e.subject_id, e.data, e.occurred_at, x.expired
          FROM x LEFT JOIN LATERAL (
            SELECT * FROM events e
             WHERE e.tenant_id = ${tenantId} AND (e.txid, e.seq) > (${after.txid}::bigint, ${after.seq}::bigint) AND e.txid < x.horizon
               AND ${typeCondition(filter)}
             ORDER BY e.txid, e.seq
             LIMIT ${limit}) e ON NOT x.expired
         ORDER BY e.txid, e.seq`,
    PREPARED,
  );
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
