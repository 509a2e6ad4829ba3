import { Injectable } from '@nestjs/common';
import { cursorList } from '../../common/cursor';
import { invalidField } from '../../common/errors';
import { page } from '../../common/pagination';
import { UnitOfWork } from '../../database/unit-of-work';
import { num } from '../../documents/quantity';
import { Journal } from '../ledger/journal.sql';
import { AvailabilityQuery, BalanceQuery, LotQuery, SerialQuery, TransactionQuery } from './dto/stock-queries.dto';
import { balancePage, FACILITY_AVAILABILITY, facilityAvailabilityPage, locationAvailabilityPage, lotPage, serialPage, transactionPage } from './stock.sql';

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
    const { rows, count, nextCursor } = await balancePage(this.m, this.uow.tenantId, query);
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
      nextCursor,
    );
  }

  /**
   * Per (item, location): on hand and allocated in Available statuses. With groupBy=facility, per
   * (item, facility) with open reserved quantity too: qtyAvailable is then available-to-promise.
   */
  async availability(query: AvailabilityQuery) {
    if (groupingOf(query) === 'facility') {
      if (query.locationId) throw invalidField('locationId', 'cannot be combined with groupBy=facility');
      const { rows, count, nextCursor } = await facilityAvailabilityPage(this.m, this.uow.tenantId, query);
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
        nextCursor,
      );
    }
    const { rows, count, nextCursor } = await locationAvailabilityPage(this.m, this.uow.tenantId, query);
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
      nextCursor,
    );
  }

  /** Newest first (postedAt, then id). Filters select transactions; each includes all its lines. */
  async transactions(query: TransactionQuery) {
    const { rows, count, nextCursor } = await transactionPage(this.m, this.uow.tenantId, query);
    return page(await this.journal.views(rows), count, query, nextCursor);
  }

  transaction(id: string) {
    return this.journal.transaction(id);
  }

  /** Newest first. */
  async lots(query: LotQuery) {
    const { rows, count, nextCursor } = await lotPage(this.m, this.uow.tenantId, query);
    return page(
      rows.map((r) => ({ id: r.id, itemId: r.item_id, lotNo: r.lot_no, expiryDate: r.expiry_date })),
      count,
      query,
      nextCursor,
    );
  }

  /** Ordered by serial number. */
  async serials(query: SerialQuery) {
    const { rows, count, nextCursor } = await serialPage(this.m, this.uow.tenantId, query);
    return page(
      rows.map((r) => ({
        id: r.id, itemId: r.item_id, serialNo: r.serial_no, lotId: r.lot_id, locationId: r.location_id, statusId: r.status_id, inStock: r.in_stock,
      })),
      count,
      query,
      nextCursor,
    );
  }
}

/**
 * The grouping of an availability request: `groupBy`, or without it the grouping `after` was handed out
 * for — each grouping is a list of its own, and a cursor carries its list's filters, groupBy among them
 * (CONTRACT §1: `after` alone pages on with the same filters). A cursor of the other grouping than the
 * one sent is refused by cursorOf (400 naming after).
 */
function groupingOf(query: AvailabilityQuery): 'location' | 'facility' {
  return query.groupBy ?? (cursorList(query.after) === FACILITY_AVAILABILITY.list ? 'facility' : 'location');
}
