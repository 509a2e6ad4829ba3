import type { EntityManager } from 'typeorm';
import { cursorOf, Keyset, newestFirst } from '../../common/cursor';
import { likePattern } from '../../common/pagination';
import { SqlFilters } from '../../database/filters.sql';
import { empty, GENERIC, join, query, raw, Sql, sql } from '../../database/sql';
import { lapsedAllocated, lapsedHolds } from '../ledger/lapsed.sql';
import { TransactionRow } from '../ledger/views';
import { AvailabilityQuery, BalanceQuery, LotQuery, SerialQuery, TransactionQuery } from './dto/stock-queries.dto';

/**
 * The stock reads: pages over balances, positions, the ledger, lots and serials, with optional filters.
 * No locks: allocated and reserved quantities leave out what expired reservations still hold
 * (`lapsed.sql`) until the expiry job runs. The hot lists run as prepared statements.
 */

type Page<T> = Promise<{ rows: T[]; count: number; nextCursor: string | null }>;

const id = (expr: string) => ({ expr, type: 'uuid' as const });
const text = (expr: string, column?: string) => ({ expr, column, type: 'text' as const });

/** The lists' documented orders (cursor paging: src/common/cursor.ts). */
export const BALANCES = new Keyset('balances', [
  text('i.item_no'), text('l.path'), { expr: 't.lot_no', nulls: 'first', type: 'text' }, text('s.code', 'status_code'), id('b.id'),
]);
export const LOCATION_AVAILABILITY = new Keyset('availability', [text('i.item_no'), text('g.path'), { ...id('i.id'), column: 'item_id' }, id('g.location_id')]);
export const FACILITY_AVAILABILITY = new Keyset('availability.facility', [text('i.item_no'), text('c.code', 'facility_code'), id('p.item_id'), id('p.facility_id')]);
export const TRANSACTIONS = newestFirst('transactions', 't', 'posted_at');
export const LOTS = newestFirst('lots', '', 'created_at');
export const SERIALS = new Keyset('serials', [text('serial_no'), id('id')]);

/** Balances with stock, by item number, location path, lot number, status code. */
export function balancePage(m: EntityManager, tenantId: string, q: BalanceQuery): Page<Record<string, string | null>> {
  const at = cursorOf(BALANCES, q);
  const f = new SqlFilters(tenantId, 'b')
    .add((v) => sql`b.item_id = ${v}`, q.itemId)
    .add((v) => sql`b.facility_id = ${v}`, q.facilityId)
    .add((v) => sql`b.location_id = ${v}`, q.locationId)
    .add((v) => sql`b.lot_id = ${v}`, q.lotId)
    .add((v) => sql`b.status_id = ${v}`, q.statusId)
    .search(['i.item_no', 'i.name'], q.q);
  return f.pageOf(
    m,
    (after) => sql`WITH ${lapsedAllocated(tenantId)}
       SELECT b.item_id, i.item_no, b.facility_id, b.location_id, b.lot_id, t.lot_no,
              to_char(t.expiry_date, 'YYYY-MM-DD') AS expiry_date, b.status_id, s.code AS status_code,
              b.qty_on_hand, b.qty_allocated - coalesce(x.qty, 0) AS qty_allocated, l.path, b.id
         FROM balances b
         LEFT JOIN lapsed_allocated x ON x.balance_id = b.id
         JOIN items i ON i.tenant_id = b.tenant_id AND i.id = b.item_id
         JOIN locations l ON l.tenant_id = b.tenant_id AND l.id = b.location_id
         JOIN stock_statuses s ON s.tenant_id = b.tenant_id AND s.id = b.status_id
         LEFT JOIN lots t ON t.tenant_id = b.tenant_id AND t.id = b.lot_id
        WHERE ${f.where} AND b.qty_on_hand <> 0 AND ${after}`,
    BALANCES,
    q,
    at,
    { prepare: true },
  );
}

/** Per (item, facility) positions with on hand, allocated or reserved stock, with their available-to-promise (`atp`). */
export function facilityAvailabilityPage(m: EntityManager, tenantId: string, q: AvailabilityQuery): Page<Record<string, string>> {
  const at = cursorOf(FACILITY_AVAILABILITY, q);
  const f = new SqlFilters(tenantId, 'p')
    .add((v) => sql`p.item_id = ${v}`, q.itemId)
    .add((v) => sql`p.facility_id = ${v}`, q.facilityId)
    .search(['i.item_no', 'i.name'], q.q);
  return f.pageOf(
    m,
    (after) => sql`WITH ${lapsedHolds(tenantId)}, live AS (
         SELECT p.tenant_id, p.item_id, p.facility_id, p.qty_available_on_hand,
                p.qty_allocated - coalesce(h.allocated, 0) AS qty_allocated, p.qty_reserved - coalesce(h.reserved, 0) AS qty_reserved
           FROM inventory_positions p
           LEFT JOIN lapsed_holds h ON h.item_id = p.item_id AND h.facility_id = p.facility_id
          WHERE p.tenant_id = ${tenantId})
       SELECT p.item_id, p.facility_id, p.qty_available_on_hand, p.qty_allocated, p.qty_reserved,
              p.qty_available_on_hand - p.qty_allocated - p.qty_reserved AS atp, i.item_no, c.code AS facility_code
         FROM live p
         JOIN items i ON i.tenant_id = p.tenant_id AND i.id = p.item_id
         JOIN facilities c ON c.tenant_id = p.tenant_id AND c.id = p.facility_id
        WHERE ${f.where} AND (p.qty_available_on_hand <> 0 OR p.qty_allocated <> 0 OR p.qty_reserved <> 0) AND ${after}`,
    FACILITY_AVAILABILITY,
    q,
    at,
    { prepare: true },
  );
}

/** Per (item, location): on hand, allocated and available in Available statuses, by item number and location path. */
export function locationAvailabilityPage(m: EntityManager, tenantId: string, q: AvailabilityQuery): Page<Record<string, string>> {
  const at = cursorOf(LOCATION_AVAILABILITY, q);
  const f = new SqlFilters(tenantId, 'b')
    .add((v) => sql`b.item_id = ${v}`, q.itemId)
    .add((v) => sql`b.facility_id = ${v}`, q.facilityId)
    .add((v) => sql`b.location_id = ${v}`, q.locationId);
  const inBalances = f.where;
  const pattern = q.q && likePattern(q.q);
  const search = pattern ? sql` AND (i.item_no ILIKE ${pattern} OR i.name ILIKE ${pattern})` : empty;
  // Balances with no stock add nothing (on hand >= 0, allocated <= on hand): `qty_on_hand > 0` stands in
  // for HAVING sum <> 0. The page is driven by the items in item-number order (an index), each item's
  // balances aggregated through an index, so it stops at the page's end instead of aggregating every
  // balance of the tenant first; the semi-join lets the planner skip items without stock in bulk.
  const grouped = (after: Sql) => sql`WITH ${lapsedAllocated(tenantId)}
      SELECT i.id AS item_id, g.facility_id, g.location_id, i.item_no, g.path, g.on_hand, g.allocated, g.available
        FROM items i
       CROSS JOIN LATERAL (
         SELECT b.facility_id, b.location_id, l.path,
                sum(b.qty_on_hand) AS on_hand, sum(b.qty_allocated - coalesce(x.qty, 0)) AS allocated,
                sum(b.qty_on_hand) - sum(b.qty_allocated - coalesce(x.qty, 0)) AS available
           FROM balances b
           LEFT JOIN lapsed_allocated x ON x.balance_id = b.id
           JOIN stock_statuses s ON s.tenant_id = b.tenant_id AND s.id = b.status_id AND s.is_available
           JOIN locations l ON l.tenant_id = b.tenant_id AND l.id = b.location_id
          WHERE ${inBalances} AND b.item_id = i.id AND b.qty_on_hand > 0
          GROUP BY b.facility_id, b.location_id, l.path) g
       WHERE i.tenant_id = ${tenantId}${search} AND i.id IN (SELECT b.item_id FROM balances b WHERE ${inBalances} AND b.qty_on_hand > 0) AND ${after}`;
  // The count needs no sums: the (item, location) pairs holding stock in an Available status.
  const countFrom = sql`SELECT DISTINCT b.item_id, b.location_id FROM balances b
        JOIN stock_statuses s ON s.tenant_id = b.tenant_id AND s.id = b.status_id AND s.is_available
        ${pattern ? sql`JOIN items i ON i.tenant_id = b.tenant_id AND i.id = b.item_id` : empty}
       WHERE ${inBalances} AND b.qty_on_hand > 0${search}`;
  return f.pageOf(m, grouped, LOCATION_AVAILABILITY, q, at, { prepare: true, countFrom });
}

const TRANSACTION_COLUMNS = raw('t.id, t.txn_no, t.type, t.posted_at, t.posted_by, t.reason, t.source_type, t.source_id');

/** Ledger transactions (without their lines), newest first (postedAt, then id). */
export async function transactionPage(m: EntityManager, tenantId: string, q: TransactionQuery): Page<TransactionRow> {
  const at = cursorOf(TRANSACTIONS, q);
  const f = new SqlFilters(tenantId, 't')
    .add((v) => sql`t.type = ${v}`, q.type)
    .add((v) => sql`t.source_id = ${v}`, q.sourceId)
    .add((v) => sql`t.posted_at >= ${v}`, q.from && new Date(q.from))
    .add((v) => sql`t.posted_at < ${v}`, q.to && new Date(q.to))
    .search(['t.txn_no', 't.reason'], q.q);
  // Line filters select the transactions with a line matching all of them; each row still carries all its lines.
  const line: Sql[] = [];
  if (q.itemId) line.push(sql`l.item_id = ${q.itemId}`);
  if (q.facilityId) line.push(sql`l.facility_id = ${q.facilityId}`);
  if (q.locationId) line.push(sql`l.location_id = ${q.locationId}`);
  if (line.length) f.always(sql`EXISTS (SELECT 1 FROM ledger_lines l WHERE l.tenant_id = t.tenant_id AND l.transaction_id = t.id AND ${join(line, ' AND ')})`);
  const select = (after: Sql) => sql`SELECT ${TRANSACTION_COLUMNS} FROM ledger_transactions t WHERE ${f.where} AND ${after}`;
  // Every posting takes the next TX number, gap-free, so the tenant's TX counter is its number of
  // transactions (ledger:verify checks it): unfiltered, no count over a ledger of millions.
  const counter = async () => {
    const [{ count }]: Array<{ count: number }> = await query(
      m,
      sql`SELECT coalesce((SELECT last_value FROM document_sequences WHERE tenant_id = ${tenantId} AND prefix = 'TX'), 0)::int AS count`,
      GENERIC,
    );
    return count;
  };
  return f.pageOf<TransactionRow>(m, select, TRANSACTIONS, q, at, { prepare: true, count: f.unfiltered ? counter : undefined });
}

/** Lots, newest first. */
export function lotPage(m: EntityManager, tenantId: string, q: LotQuery): Page<Record<string, string>> {
  const at = cursorOf(LOTS, q);
  const f = new SqlFilters(tenantId).add((v) => sql`item_id = ${v}`, q.itemId).search(['lot_no'], q.q);
  return f.pageOf(
    m,
    (after) => sql`SELECT id, item_id, lot_no, to_char(expiry_date, 'YYYY-MM-DD') AS expiry_date, created_at FROM lots WHERE ${f.where} AND ${after}`,
    LOTS,
    q,
    at,
  );
}

/** Serials, by serial number. */
export function serialPage(m: EntityManager, tenantId: string, q: SerialQuery): Page<Record<string, string | boolean>> {
  const at = cursorOf(SERIALS, q);
  const f = new SqlFilters(tenantId)
    .add((v) => sql`item_id = ${v}`, q.itemId)
    .add((v) => sql`location_id = ${v}`, q.locationId)
    .add((v) => sql`in_stock = ${v}`, q.inStock)
    .search(['serial_no'], q.q);
  return f.pageOf(
    m,
    (after) => sql`SELECT id, item_id, serial_no, lot_id, location_id, status_id, in_stock FROM serials WHERE ${f.where} AND ${after}`,
    SERIALS,
    q,
    at,
  );
}
