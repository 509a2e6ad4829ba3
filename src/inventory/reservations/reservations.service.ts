import { Injectable } from '@nestjs/common';
import { invalidField, invalidState, unknownReference } from '../../common/errors';
import { page } from '../../common/pagination';
import { SqlFilters } from '../../database/filters.sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { LedgerService } from '../ledger/ledger.service';
import { ALLOCATION_LIVE, RESERVATION_NOW, RESERVATION_STATUS_NOW } from '../ledger/lapsed.sql';
import { AllocationRow, allocationView, ReservationRow, reservationView } from '../ledger/views';
import { AllocationQuery, ReservationQuery } from './dto/reservation.dto';

/** The table of each demand document type. */
const DEMAND_TABLES = { sales_order: 'sales_orders', work_order: 'work_orders', transfer_order: 'transfer_orders' } as const;

/**
 * Read side of reservations and allocations (all changes go through the LedgerService). Reads take no
 * locks: a reservation past its expiry reads as released whether or not the expiry job has run yet.
 */
@Injectable()
export class ReservationsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly ledger: LedgerService,
  ) {}

  /** Active (open, allocated) reservations unless `status` is given; newest first. */
  async list(query: ReservationQuery) {
    const f = new SqlFilters(this.uow.tenantId, 'r')
      .add(`${RESERVATION_STATUS_NOW} = ANY(?::text[])`, query.status ? [query.status] : ['open', 'allocated'])
      .add('r.item_id = ?', query.itemId)
      .add('r.facility_id = ?', query.facilityId)
      .add('r.demand_id = ?', query.demandId)
      .search(['r.reservation_no', 'r.notes'], query.q);
    const m = this.uow.manager;
    const { rows, count } = await f.pageOf<ReservationRow>(m, `SELECT ${RESERVATION_NOW} FROM reservations r WHERE ${f.where}`, 'created_at DESC, id DESC', query);
    const allocations: AllocationRow[] = rows.length
      ? await m.query(
          `SELECT a.* FROM allocations a WHERE a.tenant_id = $1 AND a.reservation_id = ANY($2::uuid[]) AND ${ALLOCATION_LIVE} ORDER BY a.created_at, a.id`,
          [this.uow.tenantId, rows.map((r) => r.id)],
        )
      : [];
    return page(rows.map((r) => reservationView(r, allocations.filter((a) => a.reservation_id === r.id))), count, query);
  }

  get(id: string) {
    return this.ledger.reservation(id);
  }

  /**
   * A reservation that a document made for itself (a sales order's open, a work order's release: the
   * document line names it) is changed only through that document (CONTRACT §5): 409 invalid_state
   * naming the document. Allocating it stays allowed. An unknown reservation passes (the ledger answers 404).
   */
  async assertNotOwned(id: string, action: 'change' | 'release' | 'cancel' | 'fulfill'): Promise<void> {
    const [row]: Array<{ reservation_no: string; owner: string | null }> = await this.uow.manager.query(
      `SELECT r.reservation_no,
              coalesce(
                (SELECT 'sales order ' || o.order_no FROM sales_order_lines l JOIN sales_orders o ON o.tenant_id = l.tenant_id AND o.id = l.sales_order_id
                  WHERE l.tenant_id = r.tenant_id AND l.id = r.demand_line_id AND l.reservation_id = r.id),
                (SELECT 'work order ' || w.wo_no FROM work_order_components c JOIN work_orders w ON w.tenant_id = c.tenant_id AND w.id = c.work_order_id
                  WHERE c.tenant_id = r.tenant_id AND c.id = r.demand_line_id AND c.reservation_id = r.id)) AS owner
         FROM reservations r WHERE r.tenant_id = $1 AND r.id = $2`,
      [this.uow.tenantId, id],
    );
    if (row?.owner) {
      const doing = { change: 'changed', release: 'released', cancel: 'cancelled', fulfill: 'fulfilled' }[action];
      throw invalidState(`Reservation ${row.reservation_no} belongs to ${row.owner}: it is ${doing} only through that document`);
    }
  }

  /**
   * A reservation against a document (`demandType` other than `manual`) names an existing document of
   * that type in this tenant: `demandId` required (400), known (404 naming it).
   */
  async checkDemand(demandType: string | undefined, demandId: string | undefined): Promise<void> {
    if (!demandType || demandType === 'manual') return;
    if (!demandId) throw invalidField('demandId', `is required when demandType is ${demandType}`);
    const [row] = await this.uow.manager.query(`SELECT 1 FROM ${DEMAND_TABLES[demandType as keyof typeof DEMAND_TABLES]} WHERE tenant_id = $1 AND id = $2`, [this.uow.tenantId, demandId]);
    if (!row) throw unknownReference('demandId');
  }

  /** Active hard allocations; newest first. */
  async allocations(query: AllocationQuery) {
    const f = new SqlFilters(this.uow.tenantId, 'a')
      .addEach(ALLOCATION_LIVE, [])
      .add('a.reservation_id = ?', query.reservationId)
      .add('a.item_id = ?', query.itemId)
      .add('a.location_id = ?', query.locationId);
    const { rows, count } = await f.pageOf<AllocationRow>(this.uow.manager, `SELECT a.* FROM allocations a WHERE ${f.where}`, 'created_at DESC, id DESC', query);
    return page(rows.map(allocationView), count, query);
  }
}
