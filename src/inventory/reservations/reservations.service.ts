import { Injectable } from '@nestjs/common';
import { page } from '../../common/pagination';
import { SqlFilters } from '../../common/sql-filters';
import { UnitOfWork } from '../../database/unit-of-work';
import { LedgerService } from '../ledger/ledger.service';
import { ALLOCATION_LIVE, RESERVATION_NOW, RESERVATION_STATUS_NOW } from '../ledger/lapsed';
import { AllocationRow, allocationView, ReservationRow, reservationView } from '../ledger/views';
import { AllocationQuery, ReservationQuery } from './dto/reservation.dto';

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
