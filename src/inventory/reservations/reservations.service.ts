import { Injectable } from '@nestjs/common';
import { page } from '../../common/pagination';
import { SqlFilters } from '../../common/sql-filters';
import { UnitOfWork } from '../../database/unit-of-work';
import { LedgerService } from '../ledger/ledger.service';
import { AllocationRow, allocationView, ReservationRow, reservationView } from '../ledger/views';
import { AllocationQuery, ReservationQuery } from './dto/reservation.dto';

/** Read side of reservations and allocations (all changes go through the LedgerService). */
@Injectable()
export class ReservationsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly ledger: LedgerService,
  ) {}

  /** Active (open, allocated) reservations unless `status` is given; newest first. */
  async list(query: ReservationQuery) {
    await this.ledger.expireDue();
    const f = new SqlFilters(this.uow.tenantId)
      .add('status = ANY(?::text[])', query.status ? [query.status] : ['open', 'allocated'])
      .add('item_id = ?', query.itemId)
      .add('facility_id = ?', query.facilityId)
      .add('demand_id = ?', query.demandId)
      .search(['reservation_no', 'notes'], query.q);
    const m = this.uow.manager;
    const { rows, count } = await f.pageOf<ReservationRow>(m, `SELECT * FROM reservations WHERE ${f.where}`, 'created_at DESC, id DESC', query);
    const allocations: AllocationRow[] = rows.length
      ? await m.query(
          `SELECT * FROM allocations WHERE tenant_id = $1 AND reservation_id = ANY($2::uuid[]) AND status = 'active' ORDER BY created_at, id`,
          [this.uow.tenantId, rows.map((r) => r.id)],
        )
      : [];
    return page(rows.map((r) => reservationView(r, allocations.filter((a) => a.reservation_id === r.id))), count, query);
  }

  async get(id: string) {
    await this.ledger.expireDue();
    return this.ledger.reservation(id);
  }

  /** Active hard allocations; newest first. */
  async allocations(query: AllocationQuery) {
    await this.ledger.expireDue();
    const f = new SqlFilters(this.uow.tenantId)
      .add('status = ?', 'active')
      .add('reservation_id = ?', query.reservationId)
      .add('item_id = ?', query.itemId)
      .add('location_id = ?', query.locationId);
    const { rows, count } = await f.pageOf<AllocationRow>(
      this.uow.manager,
      `SELECT * FROM allocations WHERE ${f.where}`,
      'created_at DESC, id DESC',
      query,
    );
    return page(rows.map(allocationView), count, query);
  }
}
