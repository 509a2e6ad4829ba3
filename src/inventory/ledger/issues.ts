import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { insufficientStock, invalidField } from '../../common/errors';
import { UnitOfWork } from '../../database/unit-of-work';
import { qty as toQty, sql } from '../../documents/quantity';
import { at } from '../../documents/references';
import { HeldStock, planIssue } from './allocation-planner';
import { Holds, statusOf } from './holds';
import { IssueLine } from './posting';
import { ConcreteLine } from './posting-lines';
import { ReservationRow } from './views';

/** What one posting takes from the holds it consumes. */
export interface IssuePlan {
  reservations: ReservationRow[];
  takes: Array<{ reservationId: string; allocationId: string; qty: Decimal }>;
}

/**
 * Lines that consume holds: each issues (part of) a reservation's allocated stock. `plan` locks the
 * reservations and turns each issue line into outbound ledger lines from its allocations (the
 * planner decides which); `consume` records on the allocations and reservations what was issued.
 */
@Injectable()
export class Issues {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly holds: Holds,
  ) {}

  private get m() {
    return this.uow.manager;
  }

  async plan(lines: IssueLine[], ifMatch?: number): Promise<{ concrete: ConcreteLine[][]; plan: IssuePlan }> {
    const ids = [...new Set(lines.map((l) => l.reservationId))];
    const reservations = await this.holds.lock(ids, 'issue', ids.length === 1 ? ifMatch : undefined, (i) => at(lines[i]?.field, 'reservationId'));
    const held: Array<HeldStock & { reservation_id: string }> = (
      await this.m.query(
        `SELECT a.id, a.reservation_id, a.balance_id, a.location_id, l.code, a.lot_id, to_char(t.expiry_date, 'YYYY-MM-DD') AS expiry, b.status_id, a.qty
           FROM allocations a
           JOIN balances b ON b.tenant_id = a.tenant_id AND b.id = a.balance_id
           JOIN locations l ON l.tenant_id = a.tenant_id AND l.id = a.location_id
           LEFT JOIN lots t ON t.tenant_id = a.tenant_id AND t.id = a.lot_id
          WHERE a.tenant_id = $1 AND a.reservation_id = ANY($2::uuid[]) AND a.status = 'active'`,
        [this.uow.tenantId, ids],
      )
    ).map((a: Record<string, string>) => ({
      allocationId: a.id, reservation_id: a.reservation_id, balanceId: a.balance_id, locationId: a.location_id, locationCode: a.code,
      lotId: a.lot_id, expiryDate: a.expiry, statusId: a.status_id, qty: toQty(a.qty),
    }));
    const takes: IssuePlan['takes'] = [];
    const concrete = lines.map((line) => {
      const r = reservations.find((x) => x.id === line.reservationId)!;
      const qtyField = at(line.field, line.qtyField ?? 'qty');
      if (line.qty !== undefined && !toQty(line.qty).gt(0)) throw invalidField(qtyField, 'must be > 0');
      const mine = held.filter((a) => a.reservation_id === r.id);
      const { takes: taken, shortfall } = planIssue(mine, line.qty, line);
      const wanted = line.qty === undefined ? toQty(0) : toQty(line.qty);
      if (shortfall.gt(0) || (line.qty === undefined && !taken.length))
        throw insufficientStock(`Reservation ${r.reservation_no} has ${wanted.minus(shortfall).toFixed()} allocated${line.locationId || line.lotId ? ' there' : ''}; cannot issue ${wanted.toFixed()}`, [
          { field: qtyField, message: 'more than is allocated', itemId: r.item_id, requested: wanted.toNumber(), available: wanted.minus(shortfall).toNumber() },
        ]);
      let serials = line.serialNos ?? [];
      return taken.map(({ from, qty }): ConcreteLine => {
        // What this line took is gone from the allocation for the posting's next lines.
        from.qty = toQty(from.qty).minus(qty);
        takes.push({ reservationId: r.id, allocationId: from.allocationId, qty });
        const mineSerials = serials.slice(0, qty.toNumber());
        serials = serials.slice(qty.toNumber());
        return {
          itemId: r.item_id, locationId: from.locationId, lotId: from.lotId, statusId: from.statusId,
          qty: qty.negated(), allocatedDelta: qty.negated(),
          serialNos: mineSerials.length ? mineSerials : undefined, pickSerials: !mineSerials.length,
          field: line.field, qtyField: line.qtyField,
        };
      });
    });
    return { concrete, plan: { reservations, takes } };
  }

  /** Allocations lose what was issued (issued when empty); reservations count it as fulfilled. */
  async consume({ reservations, takes }: IssuePlan): Promise<void> {
    if (!takes.length) return;
    const perAllocation = new Map<string, Decimal>();
    const perReservation = new Map<string, Decimal>();
    for (const t of takes) {
      perAllocation.set(t.allocationId, (perAllocation.get(t.allocationId) ?? toQty(0)).plus(t.qty));
      perReservation.set(t.reservationId, (perReservation.get(t.reservationId) ?? toQty(0)).plus(t.qty));
    }
    await this.m.query(
      `UPDATE allocations a SET qty = a.qty - k.qty, qty_issued = a.qty_issued + k.qty,
              status = CASE WHEN a.qty - k.qty = 0 THEN 'issued' ELSE a.status END, updated_at = now()
         FROM unnest($2::uuid[], $3::numeric[]) AS k(id, qty)
        WHERE a.tenant_id = $1 AND a.id = k.id`,
      [this.uow.tenantId, [...perAllocation.keys()], [...perAllocation.values()].map(sql)],
    );
    const changed = reservations.filter((r) => perReservation.has(r.id)).map((r) => {
      const issued = perReservation.get(r.id)!;
      const allocated = toQty(r.qty_allocated).minus(issued);
      const fulfilled = toQty(r.qty_fulfilled).plus(issued);
      return { id: r.id, allocated, fulfilled, status: statusOf(toQty(r.qty), allocated, fulfilled) };
    });
    await this.m.query(
      `UPDATE reservations r SET qty_allocated = k.allocated, qty_fulfilled = k.fulfilled, status = k.status,
              version = r.version + 1, updated_by = $5, updated_at = now()
         FROM unnest($2::uuid[], $3::numeric[], $4::numeric[], $6::text[]) AS k(id, allocated, fulfilled, status)
        WHERE r.tenant_id = $1 AND r.id = k.id`,
      [this.uow.tenantId, changed.map((c) => c.id), changed.map((c) => sql(c.allocated)), changed.map((c) => sql(c.fulfilled)), this.uow.userId, changed.map((c) => c.status)],
    );
  }
}
