import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { insufficientStock, invalidField } from '../../common/errors';
import { UnitOfWork } from '../../database/unit-of-work';
import { Qty, qty as toQty, sql, sum } from '../../documents/quantity';
import { CatalogRefs, ItemRef } from '../../documents/references';
import { checkLotId } from '../../documents/tracking';
import { FreeStock, planAllocation } from './allocation-planner';
import { BALANCE_ORDER, BalanceDelta } from './counter-changes';
import { Counters } from './counters';
import { Holds, positiveQty, statusOf } from './holds';
import { Pin } from './posting';
import { ReservationRow } from './views';

interface Pinned {
  balanceId: string;
  locationId: string;
  lotId: string | null;
  statusId: string;
  qty: Decimal;
  field: string;
}

/**
 * Hard allocations: a reservation's unallocated quantity pinned to balances (Available statuses,
 * unallocated stock only), explicitly or — without pins — automatically by the planner (earliest
 * expiry first, then oldest lot, then location code).
 */
@Injectable()
export class Allocations {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly counters: Counters,
    private readonly holds: Holds,
  ) {}

  private get m() {
    return this.uow.manager;
  }

  async allocate(id: string, pins?: Pin[], ifMatch?: number): Promise<void> {
    const [r] = await this.holds.lock([id], 'allocate', ifMatch);
    const item = await this.refs.oneStockItem(r.item_id, 'itemId', 'committed');
    await this.holds.releaseLapsed([{ itemId: r.item_id, facilityId: r.facility_id }]);
    const remaining = toQty(r.qty).minus(r.qty_allocated).minus(r.qty_fulfilled);
    const plan = pins?.length ? await this.explicit(r, item, pins, remaining) : await this.automatic(r, remaining);
    const total = sum(plan.map((p) => p.qty));
    if (total.isZero()) return;
    // Balances gain allocated quantity (and so, Available statuses all, the position); reserved becomes allocated.
    await this.counters.apply(
      plan.map((p): BalanceDelta => ({
        itemId: item.id, facilityId: r.facility_id, locationId: p.locationId, lotId: p.lotId, statusId: p.statusId,
        onHand: new Qty(0), allocated: p.qty,
        detail: (requested, available) => ({ field: p.field, message: 'not enough unallocated stock', itemId: item.id, itemNo: item.itemNo, locationId: p.locationId, lotId: p.lotId, requested: requested.toNumber(), available: available.toNumber() }),
      })),
      () => true,
      [{ itemId: r.item_id, facilityId: r.facility_id, reserved: total.negated() }],
    );
    await this.m.query(
      `INSERT INTO allocations (tenant_id, id, reservation_id, balance_id, item_id, location_id, lot_id, qty, status)
       SELECT $1, gen_random_uuid(), $2, k.balance_id, $3, k.location_id, k.lot_id, k.qty, 'active'
         FROM unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::numeric[]) AS k(balance_id, location_id, lot_id, qty)`,
      [this.uow.tenantId, id, r.item_id, plan.map((p) => p.balanceId), plan.map((p) => p.locationId), plan.map((p) => p.lotId), plan.map((p) => sql(p.qty))],
    );
    const allocated = toQty(r.qty_allocated).plus(total);
    await this.m.query(
      `UPDATE reservations SET qty_allocated = $3, status = $4, version = version + 1, updated_by = $5, updated_at = now()
        WHERE tenant_id = $1 AND id = $2`,
      [this.uow.tenantId, id, sql(allocated), statusOf(toQty(r.qty), allocated, toQty(r.qty_fulfilled)), this.uow.userId],
    );
  }

  /** Each pin: a location of the reservation's facility, the item's lot rule, an Available balance there (one query for all pins). */
  private async explicit(r: ReservationRow, item: ItemRef, pins: Pin[], remaining: Decimal): Promise<Pinned[]> {
    const locations = await this.refs.locations(pins.map((p) => p.locationId));
    const lots = await this.refs.lots(pins.flatMap((p) => (p.lotId ? [p.lotId] : [])));
    const balances: Array<{ id: string; location_id: string; lot_id: string | null; status_id: string; code: string; free: string }> = await this.m.query(
      `SELECT b.id, b.location_id, b.lot_id, b.status_id, s.code, b.qty_on_hand - b.qty_allocated AS free
         FROM balances b JOIN stock_statuses s ON s.tenant_id = b.tenant_id AND s.id = b.status_id AND s.is_available
        WHERE b.tenant_id = $1 AND b.item_id = $2 AND b.location_id = ANY($3::uuid[])`,
      [this.uow.tenantId, item.id, pins.map((p) => p.locationId)],
    );
    const plan = pins.map((pin, i): Pinned => {
      const field = `allocations[${i}]`;
      // Pinning stock to a location is new work there: an inactive location is refused.
      const loc = this.refs.location(locations, pin.locationId, `${field}.locationId`, 'new', r.facility_id);
      checkLotId(lots, pin.lotId, item, `${field}.lotId`);
      const q = positiveQty(pin.qty, item, `${field}.qty`);
      // The balance with enough free stock first, then the AVAILABLE status, then by status code.
      const [balance] = balances
        .filter((b) => b.location_id === loc.id && b.lot_id === (pin.lotId ?? null))
        .sort((a, b) => Number(toQty(b.free).gte(q)) - Number(toQty(a.free).gte(q)) || Number(b.code === 'AVAILABLE') - Number(a.code === 'AVAILABLE') || (a.code < b.code ? -1 : 1));
      if (!balance)
        throw insufficientStock(`No available stock of ${item.itemNo} at ${loc.code}`, [
          { field: `${field}.qty`, message: 'no available stock', itemId: item.id, locationId: loc.id, requested: q.toNumber(), available: 0 },
        ]);
      return { balanceId: balance.id, locationId: loc.id, lotId: pin.lotId ?? null, statusId: balance.status_id, qty: q, field: `${field}.qty` };
    });
    const total = sum(plan.map((p) => p.qty));
    if (total.greaterThan(remaining)) throw invalidField('allocations', `total ${total.toFixed()} exceeds the unallocated quantity ${remaining.toFixed()}`);
    return plan;
  }

  /** Free Available stock at the facility's active locations, locked in the balances' lock order, planned by the allocation planner. */
  private async automatic(r: ReservationRow, remaining: Decimal): Promise<Pinned[]> {
    const rows: Array<{ id: string; location_id: string; code: string; lot_id: string | null; status_id: string; free: string; expiry: string | null; lot_created_at: Date | null }> =
      await this.m.query(
        `WITH locked AS (
           SELECT b.id, b.location_id, b.lot_id, b.status_id, b.qty_on_hand - b.qty_allocated AS free
             FROM balances b JOIN stock_statuses s ON s.tenant_id = b.tenant_id AND s.id = b.status_id AND s.is_available
            WHERE b.tenant_id = $1 AND b.item_id = $2 AND b.facility_id = $3 AND b.qty_on_hand > b.qty_allocated
            ORDER BY ${BALANCE_ORDER}
              FOR UPDATE OF b)
         SELECT k.*, l.code, to_char(t.expiry_date, 'YYYY-MM-DD') AS expiry, t.created_at AS lot_created_at FROM locked k
           JOIN locations l ON l.tenant_id = $1 AND l.id = k.location_id AND l.is_active
           LEFT JOIN lots t ON t.tenant_id = $1 AND t.id = k.lot_id`,
        [this.uow.tenantId, r.item_id, r.facility_id],
      );
    const candidates = rows.map((c): FreeStock & { statusId: string } => ({
      balanceId: c.id, locationId: c.location_id, locationCode: c.code, lotId: c.lot_id, expiryDate: c.expiry, lotCreatedAt: c.lot_created_at, free: c.free, statusId: c.status_id,
    }));
    const { takes, shortfall } = planAllocation(candidates, remaining);
    if (shortfall.gt(0))
      throw insufficientStock(`Not enough unallocated stock to allocate the reservation`, [
        { field: 'qty', message: 'not enough unallocated stock', itemId: r.item_id, facilityId: r.facility_id, requested: remaining.toNumber(), available: remaining.minus(shortfall).toNumber() },
      ]);
    return takes.map(({ from, qty }) => ({ balanceId: from.balanceId, locationId: from.locationId, lotId: from.lotId, statusId: (from as FreeStock & { statusId: string }).statusId, qty, field: 'qty' }));
  }
}
