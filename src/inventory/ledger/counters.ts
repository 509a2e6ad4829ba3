import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { ErrorDetail, insufficientStock } from '../../common/errors';
import { UnitOfWork } from '../../database/unit-of-work';
import { Qty, qty as toQty, sql } from '../../documents/quantity';

/** The key of a balance: (item, location, lot, status); the facility rides along. */
export interface BalanceKey {
  itemId: string;
  facilityId: string;
  locationId: string;
  lotId: string | null;
  statusId: string;
}

/** A change of one balance; `detail` explains a shortage of it (requested, available) for the 409. */
export interface BalanceDelta extends BalanceKey {
  onHand: Decimal;
  allocated: Decimal;
  detail?: (requested: Decimal, available: Decimal) => ErrorDetail;
}

/** A change of one (item, facility) position: available on hand, allocated, open reserved. */
export interface PositionDelta {
  itemId: string;
  facilityId: string;
  onHand?: Decimal;
  allocated?: Decimal;
  reserved?: Decimal;
  detail?: (requested: Decimal, available: Decimal) => ErrorDetail;
}

/**
 * THE lock order of counter rows, used by every writer: balances by (item, location, lot — none
 * first —, status), then positions by (item, facility). The strings sort as PostgreSQL sorts the uuids,
 * so SQL that locks balances orders them the same way (`BALANCE_ORDER`).
 */
export const balanceKey = (k: { itemId: string; locationId: string; lotId: string | null; statusId: string }) =>
  [k.itemId, k.locationId, k.lotId ?? '', k.statusId].join('|');
export const positionKey = (k: { itemId: string; facilityId: string }) => `${k.itemId}|${k.facilityId}`;
export const BALANCE_ORDER = 'b.item_id, b.location_id, b.lot_id NULLS FIRST, b.status_id';

const zero = new Qty(0);

interface BalanceRow {
  id: string;
  item_id: string;
  location_id: string;
  lot_id: string | null;
  status_id: string;
  qty_on_hand: string;
  qty_allocated: string;
}

/**
 * Balance and position counters. Every change: the rows are created at zero when missing and locked,
 * in one statement per table, in the lock order above; the change is checked against the locked values
 * (a shortage is a 409 naming each short key); then applied as an atomic `x = x + delta`. The CHECK
 * constraints stay the last word (constraint map → 409 insufficient_stock) should anything slip past.
 * No savepoints: nothing is written before the check passes.
 */
@Injectable()
export class Counters {
  constructor(private readonly uow: UnitOfWork) {}

  private get m() {
    return this.uow.manager;
  }

  /** Applies balance deltas (merged per key), then the position deltas they imply plus `extra` ones. */
  async apply(deltas: BalanceDelta[], available: (statusId: string) => boolean, extra: PositionDelta[] = []): Promise<void> {
    const merged = new Map<string, BalanceDelta>();
    for (const d of deltas) {
      const k = balanceKey(d);
      const e = merged.get(k);
      merged.set(k, e ? { ...e, onHand: e.onHand.plus(d.onHand), allocated: e.allocated.plus(d.allocated) } : d);
    }
    const changed = [...merged.values()].filter((d) => !d.onHand.isZero() || !d.allocated.isZero());
    await this.changeBalances(changed);
    const positions = changed
      .filter((d) => available(d.statusId))
      .map((d): PositionDelta => ({ itemId: d.itemId, facilityId: d.facilityId, onHand: d.onHand, allocated: d.allocated, detail: d.detail }));
    await this.changePositions([...positions, ...extra]);
  }

  /** Creates (at zero) and locks the balances of `keys` in lock order; returns them by balanceKey. */
  async lockBalances(keys: BalanceKey[]): Promise<Map<string, { id: string; onHand: Decimal; allocated: Decimal }>> {
    const sorted = [...new Map(keys.map((k) => [balanceKey(k), k])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, k]) => k);
    if (!sorted.length) return new Map();
    // DO UPDATE (not DO NOTHING) locks an existing row and returns it, using the unique key's index.
    const rows: BalanceRow[] = await this.m.query(
      `INSERT INTO balances AS b (tenant_id, item_id, facility_id, location_id, lot_id, status_id)
       SELECT $1, k.item_id, k.facility_id, k.location_id, k.lot_id, k.status_id
         FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[])
              WITH ORDINALITY AS k(item_id, facility_id, location_id, lot_id, status_id, ord)
        ORDER BY k.ord
       ON CONFLICT ON CONSTRAINT balances_key DO UPDATE SET updated_at = b.updated_at
       RETURNING b.id, b.item_id, b.location_id, b.lot_id, b.status_id, b.qty_on_hand, b.qty_allocated`,
      [this.uow.tenantId, ...(['itemId', 'facilityId', 'locationId', 'lotId', 'statusId'] as const).map((f) => sorted.map((k) => k[f]))],
    );
    return new Map(rows.map((r) => [
      balanceKey({ itemId: r.item_id, locationId: r.location_id, lotId: r.lot_id, statusId: r.status_id }),
      { id: r.id, onHand: toQty(r.qty_on_hand), allocated: toQty(r.qty_allocated) },
    ]));
  }

  private async changeBalances(deltas: BalanceDelta[]): Promise<void> {
    if (!deltas.length) return;
    const locked = await this.lockBalances(deltas);
    const short: ErrorDetail[] = [];
    for (const d of deltas) {
      const row = locked.get(balanceKey(d))!;
      const onHand = row.onHand.plus(d.onHand);
      const allocated = row.allocated.plus(d.allocated);
      if (onHand.lt(0) || allocated.lt(0) || allocated.gt(onHand)) {
        // Taking stock out may use the line's own allocation as well as the free quantity; allocating
        // asks for free quantity only.
        const free = row.onHand.minus(row.allocated);
        const out = d.onHand.lt(0);
        const requested = out ? d.onHand.abs() : d.allocated.abs();
        const available = Decimal.max(out ? free.plus(Decimal.max(d.allocated.negated(), 0)) : free, 0);
        short.push(describe(d, requested, available));
      }
    }
    if (short.length) throw shortage(short);
    await this.m.query(
      `UPDATE balances b SET qty_on_hand = b.qty_on_hand + k.on_hand, qty_allocated = b.qty_allocated + k.allocated, updated_at = now()
         FROM unnest($2::uuid[], $3::numeric[], $4::numeric[]) AS k(id, on_hand, allocated)
        WHERE b.tenant_id = $1 AND b.id = k.id`,
      [this.uow.tenantId, deltas.map((d) => locked.get(balanceKey(d))!.id), deltas.map((d) => sql(d.onHand)), deltas.map((d) => sql(d.allocated))],
    );
  }

  /** Frees allocated quantity of balances by id (releasing hard allocations); ids locked in lock order first. */
  async releaseAllocated(balances: Array<BalanceKey & { qty: Decimal }>): Promise<void> {
    await this.changeBalances(balances.map((b) => ({ ...b, onHand: zero, allocated: b.qty.negated() })));
  }

  /**
   * Position counters per (item, facility), merged per key: available on hand, allocated and open
   * reserved; allocated + reserved may never exceed available on hand.
   */
  async changePositions(deltas: PositionDelta[]): Promise<void> {
    const merged = new Map<string, Required<Omit<PositionDelta, 'detail'>> & Pick<PositionDelta, 'detail'>>();
    for (const d of deltas) {
      const k = positionKey(d);
      const e = merged.get(k) ?? { itemId: d.itemId, facilityId: d.facilityId, onHand: zero, allocated: zero, reserved: zero, detail: d.detail };
      merged.set(k, {
        ...e,
        onHand: e.onHand.plus(d.onHand ?? zero),
        allocated: e.allocated.plus(d.allocated ?? zero),
        reserved: e.reserved.plus(d.reserved ?? zero),
        detail: e.detail ?? d.detail,
      });
    }
    const changed = [...merged.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, p]) => p)
      .filter((p) => !p.onHand.isZero() || !p.allocated.isZero() || !p.reserved.isZero());
    if (!changed.length) return;
    const rows: Array<{ item_id: string; facility_id: string; qty_available_on_hand: string; qty_allocated: string; qty_reserved: string }> =
      await this.m.query(
        `INSERT INTO inventory_positions AS p (tenant_id, item_id, facility_id)
         SELECT $1, k.item_id, k.facility_id FROM unnest($2::uuid[], $3::uuid[]) WITH ORDINALITY AS k(item_id, facility_id, ord)
          ORDER BY k.ord
         ON CONFLICT (tenant_id, item_id, facility_id) DO UPDATE SET updated_at = p.updated_at
         RETURNING p.item_id, p.facility_id, p.qty_available_on_hand, p.qty_allocated, p.qty_reserved`,
        [this.uow.tenantId, changed.map((p) => p.itemId), changed.map((p) => p.facilityId)],
      );
    const short: ErrorDetail[] = [];
    for (const p of changed) {
      const row = rows.find((r) => r.item_id === p.itemId && r.facility_id === p.facilityId)!;
      const onHand = toQty(row.qty_available_on_hand).plus(p.onHand);
      const allocated = toQty(row.qty_allocated).plus(p.allocated);
      const reserved = toQty(row.qty_reserved).plus(p.reserved);
      if (onHand.lt(0) || allocated.lt(0) || reserved.lt(0) || allocated.plus(reserved).gt(onHand)) {
        const atp = toQty(row.qty_available_on_hand).minus(row.qty_allocated).minus(row.qty_reserved);
        // What the change asks of the available-to-promise quantity: stock taken out (less what it
        // issues from its own allocations) or newly reserved.
        const requested = p.onHand.lt(0) ? p.onHand.abs() : p.reserved;
        const available = Decimal.max(p.onHand.lt(0) ? atp.plus(p.allocated.abs()) : atp, 0);
        const detail = p.detail?.(requested, available) ?? { itemId: p.itemId, facilityId: p.facilityId, requested: requested.toNumber(), available: available.toNumber() };
        short.push({
          ...detail,
          message: p.onHand.lt(0)
            ? 'would leave the facility with less available stock than it has allocated and reserved; release holds first'
            : 'exceeds the available-to-promise quantity',
        });
      }
    }
    if (short.length) throw shortage(short);
    await this.m.query(
      `UPDATE inventory_positions p
          SET qty_available_on_hand = p.qty_available_on_hand + k.on_hand, qty_allocated = p.qty_allocated + k.allocated,
              qty_reserved = p.qty_reserved + k.reserved, updated_at = now()
         FROM unnest($2::uuid[], $3::uuid[], $4::numeric[], $5::numeric[], $6::numeric[]) AS k(item_id, facility_id, on_hand, allocated, reserved)
        WHERE p.tenant_id = $1 AND p.item_id = k.item_id AND p.facility_id = k.facility_id`,
      [this.uow.tenantId, changed.map((p) => p.itemId), changed.map((p) => p.facilityId), changed.map((p) => sql(p.onHand)), changed.map((p) => sql(p.allocated)), changed.map((p) => sql(p.reserved))],
    );
  }
}

function describe(d: BalanceDelta, requested: Decimal, available: Decimal): ErrorDetail {
  return d.detail
    ? d.detail(requested, available)
    : { message: 'not enough stock', itemId: d.itemId, locationId: d.locationId, lotId: d.lotId, statusId: d.statusId, requested: requested.toNumber(), available: available.toNumber() };
}

/** 409 insufficient_stock naming every short key; the message names the first. */
export function shortage(details: ErrorDetail[]) {
  const first = details[0];
  return insufficientStock(
    first ? `Insufficient stock${first.itemNo ? ` of ${first.itemNo}` : ''}: requested ${first.requested}, available ${first.available}` : 'Insufficient stock',
    details,
  );
}
