import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { insufficientStock, invalidField } from '../../common/errors';
import { query, raw, sql } from '../../database/sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { Qty, qty as toQty, sql as decimalText, sum } from '../../documents/quantity';
import { CatalogRefs, ItemRef, LocationRef, LotRef, unique } from '../../documents/references.sql';
import { checkLotId } from '../../documents/tracking';
import { FreeStock, planAllocation } from './allocation-planner';
import { BALANCE_ORDER, BalanceDelta, PositionDelta, positionKey } from './counter-changes';
import { Counters } from './counters.sql';
import { Holds, positiveQty, RESERVATION, statusOf } from './holds.sql';
import { Pin } from './posting';
import { ReservationRow } from './views';

/** One reservation to allocate: the given pins, or (without) automatically everything it has unallocated. */
export interface AllocationRequest {
  reservationId: string;
  pins?: Pin[];
  /**
   * Where errors point, e.g. `lines[3]` (a pin's fields become `lines[3].locationId`, `.lotId`, `.qty`).
   * Unset: the reservation API's own fields (`allocations[i].…`, `qty`).
   */
  field?: string;
}

/** A balance of a position being allocated, locked for the unit of work. */
interface StockRow {
  id: string;
  item_id: string;
  facility_id: string;
  location_id: string;
  lot_id: string | null;
  status_id: string;
  status_code: string;
  location_code: string;
  location_active: boolean;
  free: string;
  expiry: string | null;
  lot_created_at: Date | null;
}

interface Pinned {
  reservation: ReservationRow;
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
 *
 * Set-based for a whole document: every reservation of the call is locked in one statement (id order),
 * then every Available balance with stock of every (item, facility) they hold, in one statement in the
 * balances' lock order, then the counters (balances, positions) in one statement. Two documents
 * allocating the same items in opposite line order therefore queue on the first row they share
 * instead of deadlocking, and a document of 1,000 lines costs a fixed number of statements.
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

  /**
   * Allocates each request in order (several requests may name one reservation: they add up). `also`:
   * further reservations of the same document whose stock the caller is about to issue; their
   * balances are locked in the same pass, so the document takes all its rows in the one lock order.
   * `ifMatch` applies to a single request's reservation.
   */
  async allocateAll(requests: AllocationRequest[], options: { ifMatch?: number; also?: string[] } = {}): Promise<void> {
    if (!requests.length) return;
    const ids = unique([...requests.map((r) => r.reservationId), ...(options.also ?? [])]);
    const locked = await this.holds.lock(ids, undefined, requests.length === 1 ? options.ifMatch : undefined);
    const rows = new Map(locked.map((r) => [r.id, r]));
    for (const req of requests) {
      const r = rows.get(req.reservationId)!;
      RESERVATION.check('allocate', r.status, r.reservation_no);
    }
    const items = await this.refs.items(locked.map((r) => r.item_id));
    const positions = [...new Map(locked.map((r) => [positionKey({ itemId: r.item_id, facilityId: r.facility_id }), { itemId: r.item_id, facilityId: r.facility_id }])).values()];
    await this.holds.releaseLapsed(positions);
    // What each reservation still has unallocated, as this call plans.
    const remaining = new Map(locked.map((r) => [r.id, toQty(r.qty).minus(r.qty_allocated).minus(r.qty_fulfilled)]));
    // The most of the planner's order an allocation of this call can reach, per position: what its pins
    // take plus what its automatic requests may take (each reservation's unallocated rest, once).
    const need = new Map<string, Decimal>();
    const add = (r: ReservationRow, q: Decimal) => {
      const key = positionKey({ itemId: r.item_id, facilityId: r.facility_id });
      need.set(key, (need.get(key) ?? toQty(0)).plus(Decimal.max(q, 0)));
    };
    for (const req of requests) for (const pin of req.pins ?? []) add(rows.get(req.reservationId)!, toQty(pin.qty));
    for (const id of new Set(requests.filter((req) => !req.pins?.length).map((req) => req.reservationId))) add(rows.get(id)!, remaining.get(id)!);
    const pinnedAt = requests.flatMap((req) => (req.pins ?? []).map((pin) => ({ itemId: rows.get(req.reservationId)!.item_id, locationId: pin.locationId })));
    const stock = await this.lockStock(positions.map((p) => ({ ...p, need: need.get(positionKey(p)) ?? toQty(0) })), pinnedAt);
    // Each reservation plans over its own position's balances only (a document of 1,000 lines locks
    // thousands of balances: filtering them all per line was quadratic).
    const stockAt = new Map<string, StockRow[]>();
    for (const b of stock) {
      const key = positionKey({ itemId: b.item_id, facilityId: b.facility_id });
      const at = stockAt.get(key);
      if (at) at.push(b);
      else stockAt.set(key, [b]);
    }
    const pinned = requests.flatMap((req) => req.pins ?? []);
    const locations = pinned.length ? await this.refs.locations(pinned.map((p) => p.locationId)) : new Map<string, LocationRef>();
    const lots = pinned.some((p) => p.lotId) ? await this.refs.lots(pinned.flatMap((p) => (p.lotId ? [p.lotId] : []))) : [];

    // What each balance still has free, as this call plans.
    const free = new Map(stock.map((b) => [b.id, toQty(b.free)]));
    const plan: Pinned[] = [];
    for (const req of requests) {
      const r = rows.get(req.reservationId)!;
      const item = this.refs.stockItem(items, r.item_id, req.field ? `${req.field}.itemId` : 'itemId', 'committed');
      const left = remaining.get(r.id)!;
      const own = stockAt.get(positionKey({ itemId: r.item_id, facilityId: r.facility_id })) ?? [];
      const takes = req.pins?.length ? this.explicit(req, r, item, own, free, locations, lots, left) : this.automatic(req, r, own, free, left);
      for (const t of takes) free.set(t.balanceId, free.get(t.balanceId)!.minus(t.qty));
      remaining.set(r.id, left.minus(sum(takes.map((t) => t.qty))));
      plan.push(...takes);
    }
    if (!plan.length) return;

    // Balances gain allocated quantity (and so, Available statuses all, the positions); reserved becomes allocated.
    const reserved = new Map<string, PositionDelta>();
    for (const p of plan) {
      const key = positionKey({ itemId: p.reservation.item_id, facilityId: p.reservation.facility_id });
      const d = reserved.get(key) ?? { itemId: p.reservation.item_id, facilityId: p.reservation.facility_id, reserved: new Qty(0) };
      d.reserved = toQty(d.reserved!).minus(p.qty);
      reserved.set(key, d);
    }
    await this.counters.apply(
      plan.map((p): BalanceDelta => {
        const item = items.get(p.reservation.item_id)!;
        return {
          itemId: item.id, facilityId: p.reservation.facility_id, locationId: p.locationId, lotId: p.lotId, statusId: p.statusId,
          onHand: new Qty(0), allocated: p.qty,
          detail: (requested, available) => ({ field: p.field, message: 'not enough unallocated stock', itemId: item.id, itemNo: item.itemNo, locationId: p.locationId, lotId: p.lotId, requested: requested.toNumber(), available: available.toNumber() }),
        };
      }),
      () => true,
      [...reserved.values()],
    );
    await query(
      this.m,
      sql`INSERT INTO allocations (tenant_id, id, reservation_id, balance_id, item_id, location_id, lot_id, qty, status)
       SELECT ${this.uow.tenantId}, gen_random_uuid(), k.reservation_id, k.balance_id, k.item_id, k.location_id, k.lot_id, k.qty, 'active'
         FROM unnest(${plan.map((p) => p.reservation.id)}::uuid[], ${plan.map((p) => p.balanceId)}::uuid[], ${plan.map((p) => p.reservation.item_id)}::uuid[],
                     ${plan.map((p) => p.locationId)}::uuid[], ${plan.map((p) => p.lotId)}::uuid[], ${plan.map((p) => decimalText(p.qty))}::numeric[])
              AS k(reservation_id, balance_id, item_id, location_id, lot_id, qty)`,
    );
    const changed = locked.filter((r) => !remaining.get(r.id)!.eq(toQty(r.qty).minus(r.qty_allocated).minus(r.qty_fulfilled)));
    const allocated = (r: ReservationRow) => toQty(r.qty).minus(r.qty_fulfilled).minus(remaining.get(r.id)!);
    await query(
      this.m,
      sql`UPDATE reservations r SET qty_allocated = k.allocated, status = k.status, version = r.version + 1, updated_by = ${this.uow.userId}, updated_at = now()
         FROM unnest(${changed.map((r) => r.id)}::uuid[], ${changed.map((r) => decimalText(allocated(r)))}::numeric[],
                     ${changed.map((r) => statusOf(toQty(r.qty), allocated(r), toQty(r.qty_fulfilled)))}::text[]) AS k(id, allocated, status)
        WHERE r.tenant_id = ${this.uow.tenantId} AND r.id = k.id`,
    );
  }

  /**
   * Every Available balance holding stock of the positions, locked in the balances' lock order in one
   * statement; returned with what the planner needs (location code and state, lot expiry and age) are
   * those it can reach: per position, the planner's order (fefoOrder: earliest expiry, oldest lot,
   * location code, balance id) up to the row whose free stock at active locations brings the running sum
   * to the position's `need` (every row when they do not reach it), and every row at a pinned item and
   * location. A 1,000-line document at items stocked in ten places reads 1,000 rows, not 10,000.
   */
  private lockStock(positions: Array<{ itemId: string; facilityId: string; need: Decimal }>, pinnedAt: Array<{ itemId: string; locationId: string }>): Promise<StockRow[]> {
    const tenant = this.uow.tenantId;
    return query(
      this.m,
      sql`WITH want AS (
         SELECT * FROM unnest(${positions.map((p) => p.itemId)}::uuid[], ${positions.map((p) => p.facilityId)}::uuid[], ${positions.map((p) => decimalText(p.need))}::numeric[])
             AS w(item_id, facility_id, need)),
       locked AS (
         SELECT b.id, b.item_id, b.facility_id, b.location_id, b.lot_id, b.status_id, s.code AS status_code,
                b.qty_on_hand - b.qty_allocated AS free, w.need
           FROM balances b JOIN stock_statuses s ON s.tenant_id = b.tenant_id AND s.id = b.status_id AND s.is_available
           JOIN want w ON w.item_id = b.item_id AND w.facility_id = b.facility_id
          WHERE b.tenant_id = ${tenant} AND b.qty_on_hand > 0
          ORDER BY ${raw(BALANCE_ORDER)}
            FOR UPDATE OF b),
       ranked AS (
         SELECT k.*, l.code AS location_code, l.is_active AS location_active, to_char(t.expiry_date, 'YYYY-MM-DD') AS expiry, t.created_at AS lot_created_at,
                coalesce(sum(k.free) FILTER (WHERE l.is_active AND k.free > 0) OVER (
                  PARTITION BY k.item_id, k.facility_id
                  ORDER BY t.expiry_date NULLS LAST, date_trunc('milliseconds', t.created_at) NULLS LAST, l.code COLLATE "C", k.id
                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
           FROM locked k
           JOIN locations l ON l.tenant_id = ${tenant} AND l.id = k.location_id
           LEFT JOIN lots t ON t.tenant_id = ${tenant} AND t.id = k.lot_id)
       SELECT id, item_id, facility_id, location_id, lot_id, status_id, status_code, free, location_code, location_active, expiry, lot_created_at
         FROM ranked
        WHERE before < need
           OR (item_id, location_id) IN (SELECT * FROM unnest(${pinnedAt.map((p) => p.itemId)}::uuid[], ${pinnedAt.map((p) => p.locationId)}::uuid[]))`,
    );
  }

  /**
   * Each pin: a location of the reservation's facility, the item's lot rule, an Available balance there with
   * stock (`stock`: the locked balances of the reservation's position).
   */
  private explicit(
    req: AllocationRequest, r: ReservationRow, item: ItemRef, stock: StockRow[], free: Map<string, Decimal>,
    locations: Map<string, LocationRef>, lots: LotRef[], remaining: Decimal,
  ): Pinned[] {
    const fieldOf = (i: number, key: string) => (req.field ? `${req.field}.${key}` : `allocations[${i}].${key}`);
    const plan = req.pins!.map((pin, i): Pinned => {
      // Pinning stock to a location is new work there: an inactive location is refused.
      const loc = this.refs.location(locations, pin.locationId, fieldOf(i, 'locationId'), 'new', r.facility_id);
      checkLotId(lots, pin.lotId, item, fieldOf(i, 'lotId'));
      const q = positiveQty(pin.qty, item, fieldOf(i, 'qty'));
      // The balance with enough free stock first, then the AVAILABLE status, then by status code.
      const [balance] = stock
        .filter((b) => b.location_id === loc.id && b.lot_id === (pin.lotId ?? null))
        .sort((a, b) => {
          const [fa, fb] = [free.get(a.id)!.gte(q), free.get(b.id)!.gte(q)];
          return Number(fb) - Number(fa) || Number(b.status_code === 'AVAILABLE') - Number(a.status_code === 'AVAILABLE') || (a.status_code < b.status_code ? -1 : 1);
        });
      if (!balance)
        throw insufficientStock(`No available stock of ${item.itemNo} at ${loc.code}`, [
          { field: fieldOf(i, 'qty'), message: 'no available stock', itemId: item.id, locationId: loc.id, requested: q.toNumber(), available: 0 },
        ]);
      return { reservation: r, balanceId: balance.id, locationId: loc.id, lotId: pin.lotId ?? null, statusId: balance.status_id, qty: q, field: fieldOf(i, 'qty') };
    });
    const total = sum(plan.map((p) => p.qty));
    if (total.greaterThan(remaining)) throw invalidField(req.field ? `${req.field}.qty` : 'allocations', `total ${total.toFixed()} exceeds the unallocated quantity ${remaining.toFixed()}`);
    return plan;
  }

  /**
   * Everything unallocated, from free Available stock at the facility's active locations (the planner's
   * order; `stock`: the locked balances of the reservation's position).
   */
  private automatic(req: AllocationRequest, r: ReservationRow, stock: StockRow[], free: Map<string, Decimal>, remaining: Decimal): Pinned[] {
    if (!remaining.gt(0)) return [];
    const candidates = stock
      .filter((b) => b.location_active && free.get(b.id)!.gt(0))
      .map((b): FreeStock & { row: StockRow } => ({
        balanceId: b.id, locationId: b.location_id, locationCode: b.location_code, lotId: b.lot_id, expiryDate: b.expiry, lotCreatedAt: b.lot_created_at, free: free.get(b.id)!, row: b,
      }));
    const { takes, shortfall } = planAllocation(candidates, remaining);
    const field = req.field ? `${req.field}.qty` : 'qty';
    if (shortfall.gt(0))
      throw insufficientStock(`Not enough unallocated stock to allocate the reservation`, [
        { field, message: 'not enough unallocated stock', itemId: r.item_id, facilityId: r.facility_id, requested: remaining.toNumber(), available: remaining.minus(shortfall).toNumber() },
      ]);
    return takes.map(({ from, qty }) => {
      const b = (from as FreeStock & { row: StockRow }).row;
      return { reservation: r, balanceId: b.id, locationId: b.location_id, lotId: b.lot_id, statusId: b.status_id, qty, field };
    });
  }
}
