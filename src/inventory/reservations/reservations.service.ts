import { Injectable } from '@nestjs/common';
import { invalidField, invalidState, unknownReference } from '../../common/errors';
import { page } from '../../common/pagination';
import { UnitOfWork } from '../../database/unit-of-work';
import { WorkOrder } from '../../production/work-order.entity';
import { SalesOrder } from '../../sales/sales-order.entity';
import { LedgerService } from '../ledger/ledger.service';
import { liveAllocations } from '../ledger/reads.sql';
import { allocationView, reservationView } from '../ledger/views';
import { TransferOrder } from '../transfers/transfer.entity';
import { AllocationQuery, ReservationQuery } from './dto/reservation.dto';
import { listAllocations, listReservations, reservationOwner } from './reservations.sql';

/** The document of each demand type. */
const DEMAND_DOCUMENTS = { sales_order: SalesOrder, work_order: WorkOrder, transfer_order: TransferOrder } as const;

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
    const m = this.uow.manager;
    const { rows, count, nextCursor } = await listReservations(m, this.uow.tenantId, query);
    const allocations = rows.length ? await liveAllocations(m, this.uow.tenantId, rows.map((r) => r.id)) : [];
    return page(rows.map((r) => reservationView(r, allocations.filter((a) => a.reservation_id === r.id))), count, query, nextCursor);
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
    const row = await reservationOwner(this.uow.manager, this.uow.tenantId, id);
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
    const document = DEMAND_DOCUMENTS[demandType as keyof typeof DEMAND_DOCUMENTS];
    if (!(await this.uow.repository<SalesOrder | WorkOrder | TransferOrder>(document).count({ id: demandId }))) throw unknownReference('demandId');
  }

  /** Active hard allocations; newest first. */
  async allocations(query: AllocationQuery) {
    const { rows, count, nextCursor } = await listAllocations(this.uow.manager, this.uow.tenantId, query);
    return page(rows.map(allocationView), count, query, nextCursor);
  }
}
