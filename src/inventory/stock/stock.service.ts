import { Injectable } from '@nestjs/common';
import { invalidField } from '../../common/errors';
import { likePattern, page } from '../../common/pagination';
import { SqlFilters } from '../../database/filters.sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { num } from '../../documents/quantity';
import { GENERIC, prepared } from '../../database/prepared';
import { Journal } from '../ledger/journal.sql';
import { LAPSED_ALLOCATED, LAPSED_HOLDS } from '../ledger/lapsed.sql';
import { TransactionRow } from '../ledger/views';
import { AvailabilityQuery, BalanceQuery, LotQuery, SerialQuery, TransactionQuery } from './dto/stock-queries.dto';

/**
 * Read side of the inventory: balances, availability, the ledger, lots, serials. No locks: allocated
 * and reserved quantities leave out what expired reservations still hold until the expiry job runs.
 */
@Injectable()
export class StockService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly journal: Journal,
  ) {}

  private get m() {
    return this.uow.manager;
  }

  /** Ordered by item number, location path, lot number, status code. Zero rows are omitted. */
  async balances(query: BalanceQuery) {
    const f = new SqlFilters(this.uow.tenantId, 'b')
      .add('b.item_id = ?', query.itemId)
      .add('b.facility_id = ?', query.facilityId)
      .add('b.location_id = ?', query.locationId)
      .add('b.lot_id = ?', query.lotId)
      .add('b.status_id = ?', query.statusId)
      .search(['i.item_no', 'i.name'], query.q);
    const { rows, count } = await f.pageOf<Record<string, string | null>>(
      this.m,
      `WITH ${LAPSED_ALLOCATED}
       SELECT b.item_id, i.item_no, b.facility_id, b.location_id, b.lot_id, t.lot_no,
              to_char(t.expiry_date, 'YYYY-MM-DD') AS expiry_date, b.status_id, s.code AS status_code,
              b.qty_on_hand, b.qty_allocated - coalesce(x.qty, 0) AS qty_allocated, l.path, b.id
         FROM balances b
         LEFT JOIN lapsed_allocated x ON x.balance_id = b.id
         JOIN items i ON i.tenant_id = b.tenant_id AND i.id = b.item_id
         JOIN locations l ON l.tenant_id = b.tenant_id AND l.id = b.location_id
         JOIN stock_statuses s ON s.tenant_id = b.tenant_id AND s.id = b.status_id
         LEFT JOIN lots t ON t.tenant_id = b.tenant_id AND t.id = b.lot_id
        WHERE ${f.where} AND b.qty_on_hand <> 0`,
      'item_no, path, lot_no NULLS FIRST, status_code, id',
      query,
      { prepare: true },
    );
    return page(
      rows.map((r) => ({
        itemId: r.item_id,
        itemNo: r.item_no,
        facilityId: r.facility_id,
        locationId: r.location_id,
        lotId: r.lot_id,
        lotNo: r.lot_no,
        expiryDate: r.expiry_date,
        statusId: r.status_id,
        statusCode: r.status_code,
        qtyOnHand: num(r.qty_on_hand),
        qtyAllocated: num(r.qty_allocated),
      })),
      count,
      query,
    );
  }

  /**
   * Per (item, location): on hand and allocated in Available statuses. With groupBy=facility, per
   * (item, facility) with open reserved quantity too: qtyAvailable is then available-to-promise.
   */
  async availability(query: AvailabilityQuery) {
    if (query.groupBy === 'facility') {
      if (query.locationId) throw invalidField('locationId', 'cannot be combined with groupBy=facility');
      const f = new SqlFilters(this.uow.tenantId, 'p')
        .add('p.item_id = ?', query.itemId)
        .add('p.facility_id = ?', query.facilityId)
        .search(['i.item_no', 'i.name'], query.q);
      const { rows, count } = await f.pageOf<Record<string, string>>(
        this.m,
        `WITH ${LAPSED_HOLDS}, live AS (
           SELECT p.tenant_id, p.item_id, p.facility_id, p.qty_available_on_hand,
                  p.qty_allocated - coalesce(h.allocated, 0) AS qty_allocated, p.qty_reserved - coalesce(h.reserved, 0) AS qty_reserved
             FROM inventory_positions p
             LEFT JOIN lapsed_holds h ON h.item_id = p.item_id AND h.facility_id = p.facility_id
            WHERE p.tenant_id = $1)
         SELECT p.item_id, p.facility_id, p.qty_available_on_hand, p.qty_allocated, p.qty_reserved,
                p.qty_available_on_hand - p.qty_allocated - p.qty_reserved AS atp, i.item_no, c.code AS facility_code
           FROM live p
           JOIN items i ON i.tenant_id = p.tenant_id AND i.id = p.item_id
           JOIN facilities c ON c.tenant_id = p.tenant_id AND c.id = p.facility_id
          WHERE ${f.where} AND (p.qty_available_on_hand <> 0 OR p.qty_allocated <> 0 OR p.qty_reserved <> 0)`,
        'item_no, facility_code, item_id, facility_id',
        query,
        { prepare: true },
      );
      return page(
        rows.map((r) => ({
          itemId: r.item_id,
          facilityId: r.facility_id,
          qtyOnHand: num(r.qty_available_on_hand),
          qtyAllocated: num(r.qty_allocated),
          qtyReserved: num(r.qty_reserved),
          qtyAvailable: num(r.atp),
        })),
        count,
        query,
      );
    }
    const f = new SqlFilters(this.uow.tenantId, 'b')
      .add('b.item_id = ?', query.itemId)
      .add('b.facility_id = ?', query.facilityId)
      .add('b.location_id = ?', query.locationId);
    const inBalances = f.where;
    const search = query.q ? ` AND (i.item_no ILIKE $${f.params.push(likePattern(query.q))} OR i.name ILIKE $${f.params.length})` : '';
    // Balances with no stock add nothing (on hand >= 0, allocated <= on hand): `qty_on_hand > 0` stands in
    // for HAVING sum <> 0. The page is driven by the items in item-number order (an index), each item's
    // balances aggregated through an index, so it stops at the page's end instead of aggregating every
    // balance of the tenant first; the semi-join lets the planner skip items without stock in bulk.
    const grouped = `WITH ${LAPSED_ALLOCATED}
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
       WHERE i.tenant_id = $1${search} AND i.id IN (SELECT b.item_id FROM balances b WHERE ${inBalances} AND b.qty_on_hand > 0)`;
    // The count needs no sums: the (item, location) pairs holding stock in an Available status.
    const countFrom = `SELECT DISTINCT b.item_id, b.location_id FROM balances b
        JOIN stock_statuses s ON s.tenant_id = b.tenant_id AND s.id = b.status_id AND s.is_available
        ${search ? 'JOIN items i ON i.tenant_id = b.tenant_id AND i.id = b.item_id' : ''}
       WHERE ${inBalances} AND b.qty_on_hand > 0${search}`;
    const { rows, count } = await f.pageOf<Record<string, string>>(this.m, grouped, 'i.item_no, g.path, i.id, g.location_id', query, { prepare: true, countFrom });
    return page(
      rows.map((r) => ({
        itemId: r.item_id,
        facilityId: r.facility_id,
        locationId: r.location_id,
        qtyOnHand: num(r.on_hand),
        qtyAllocated: num(r.allocated),
        qtyAvailable: num(r.available),
      })),
      count,
      query,
    );
  }

  /** Newest first (postedAt, then id). Filters select transactions; each includes all its lines. */
  async transactions(query: TransactionQuery) {
    const f = new SqlFilters(this.uow.tenantId, 't')
      .add('t.type = ?', query.type)
      .add('t.source_id = ?', query.sourceId)
      .add('t.posted_at >= ?', query.from && new Date(query.from))
      .add('t.posted_at < ?', query.to && new Date(query.to))
      .search(['t.txn_no', 't.reason'], query.q);
    // Line filters select the transactions with a line matching all of them; each row still carries all its lines.
    const line = (
      [['l.item_id = ?', query.itemId], ['l.facility_id = ?', query.facilityId], ['l.location_id = ?', query.locationId]] as const
    ).filter(([, value]) => value);
    if (line.length)
      f.addEach(
        `EXISTS (SELECT 1 FROM ledger_lines l WHERE l.tenant_id = t.tenant_id AND l.transaction_id = t.id AND ${line.map(([c]) => c).join(' AND ')})`,
        line.map(([, value]) => value),
      );
    const select = `SELECT ${TRANSACTION_COLUMNS} FROM ledger_transactions t WHERE ${f.where}`;
    if (f.unfiltered) {
      // Every posting takes the next TX number, gap-free, so the tenant's TX counter is its number of
      // transactions (ledger:verify checks it): no count over a ledger of millions.
      const [{ count }] = await this.m.query(
        prepared(`SELECT coalesce((SELECT last_value FROM document_sequences WHERE tenant_id = $1 AND prefix = 'TX'), 0)::int AS count`, GENERIC),
        [this.uow.tenantId],
      );
      const rows: TransactionRow[] = await this.m.query(prepared(`${select} ORDER BY t.posted_at DESC, t.id DESC ${f.page(query)}`), f.params);
      return page(await this.journal.views(rows), count, query);
    }
    const { rows, count } = await f.pageOf<TransactionRow>(this.m, select, 't.posted_at DESC, t.id DESC', query, { prepare: true });
    return page(await this.journal.views(rows), count, query);
  }

  transaction(id: string) {
    return this.journal.transaction(id);
  }

  /** Newest first. */
  async lots(query: LotQuery) {
    const f = new SqlFilters(this.uow.tenantId).add('item_id = ?', query.itemId).search(['lot_no'], query.q);
    const { rows, count } = await f.pageOf<Record<string, string>>(
      this.m,
      `SELECT id, item_id, lot_no, to_char(expiry_date, 'YYYY-MM-DD') AS expiry_date, created_at FROM lots WHERE ${f.where}`,
      'created_at DESC, id DESC',
      query,
    );
    return page(
      rows.map((r) => ({ id: r.id, itemId: r.item_id, lotNo: r.lot_no, expiryDate: r.expiry_date })),
      count,
      query,
    );
  }

  /** Ordered by serial number. */
  async serials(query: SerialQuery) {
    const f = new SqlFilters(this.uow.tenantId)
      .add('item_id = ?', query.itemId)
      .add('location_id = ?', query.locationId)
      .add('in_stock = ?', query.inStock)
      .search(['serial_no'], query.q);
    const { rows, count } = await f.pageOf<Record<string, string | boolean>>(
      this.m,
      `SELECT id, item_id, serial_no, lot_id, location_id, status_id, in_stock FROM serials WHERE ${f.where}`,
      'serial_no, id',
      query,
    );
    return page(
      rows.map((r) => ({
        id: r.id, itemId: r.item_id, serialNo: r.serial_no, lotId: r.lot_id, locationId: r.location_id, statusId: r.status_id, inStock: r.in_stock,
      })),
      count,
      query,
    );
  }
}

const TRANSACTION_COLUMNS = 't.id, t.txn_no, t.type, t.posted_at, t.posted_by, t.reason, t.source_type, t.source_id';
