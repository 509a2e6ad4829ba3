import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { timeOrderedId } from '../../common/ids';
import { UUID_PATTERN } from '../../common/uuid';
import { isoText, recordEventsSql } from '../../events/events.sql';
import { AppError, assertVersion, insufficientStock, invalidField, invalidState, notFound, unknownReference } from '../../common/errors';
import { GENERIC, query, raw, Sql, sql } from '../../database/sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { Transitions } from '../../documents/document-store';
import { DocumentNumbers, nextNumberSql } from '../../documents/numbering.sql';
import { Qty, qty as toQty, sql as decimalText } from '../../documents/quantity';
import { at, CatalogRefs, ItemRef } from '../../documents/references.sql';
import { checkBaseDecimals } from '../../documents/tracking';
import { BalanceDelta, PositionDelta, positionKey, shortage } from './counter-changes';
import { AFTER_COUNTERS, CounterRows, CounterWrite, Counters } from './counters.sql';
import { LAPSED, lapsedHolds, RESERVATION_NOW } from './lapsed.sql';
import { Reservation } from './ledger.entities';
import { Ending, Hold } from './posting';
import { PostingFacts } from './posting-facts';
import { ALLOCATION_COLUMNS, AllocationRow, RESERVATION_COLUMNS, ReservationRow } from './views';

/** What may be done with a reservation in which state (CONTRACT §5). */
export const RESERVATION = new Transitions<string, 'change' | 'allocate' | 'release' | 'cancel' | 'fulfill' | 'issue'>('Reservation', {
  change: { from: ['open'] },
  allocate: { from: ['open'] },
  release: { from: ['open', 'allocated'], to: 'released' },
  cancel: { from: ['open', 'allocated'], to: 'cancelled' },
  fulfill: { from: ['allocated'] },
  issue: { from: ['open', 'allocated'] },
});

/** open → allocated when everything not yet fulfilled is allocated; fulfilled when everything is. */
export function statusOf(qty: Decimal, allocated: Decimal, fulfilled: Decimal): 'open' | 'allocated' | 'fulfilled' {
  if (fulfilled.greaterThanOrEqualTo(qty)) return 'fulfilled';
  if (allocated.plus(fulfilled).greaterThanOrEqualTo(qty) && allocated.gt(0)) return 'allocated';
  return 'open';
}

/** A positive quantity in the item's base unit. */
export function positiveQty(value: Decimal.Value, item: ItemRef, field: string): Decimal {
  const q = toQty(value);
  if (!q.gt(0)) throw invalidField(field, 'must be > 0');
  checkBaseDecimals(item, q, field);
  return q;
}

/**
 * Reservations (soft holds at item × facility) and the freeing of what they hold. Allocation and
 * issuing live in `allocations.sql.ts` and `issues.sql.ts`; both lock reservations through `lock` here.
 */
@Injectable()
export class Holds {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly counters: Counters,
    private readonly numbers: DocumentNumbers,
    private readonly facts: PostingFacts,
  ) {}

  private get m() {
    return this.uow.manager;
  }

  /**
   * A new soft hold (new work: the item and facility must be active), refused beyond available-to-promise.
   * The reservation number, the row and the reserved counter are written in one statement, the last
   * before COMMIT where nothing can follow (`ending.last`, no expiry): the tenant's number row is then
   * locked only while the server commits. Returns the new row as it reads now, unless it lapsed at once
   * (an expiry in the past), in which case it is released and only its id is returned.
   */
  async reserve(hold: Hold, ending: Ending = { last: false }): Promise<{ id: string; row?: ReservationRow }> {
    // The item, the facility and the position's counter row (locked) in one statement.
    const ids = UUID_PATTERN.test(hold.itemId) && UUID_PATTERN.test(hold.facilityId);
    const { items, facility, rider: prelocked } = await this.refs.forHold(
      hold.itemId,
      hold.facilityId,
      ids ? this.counters.prelockPositions([{ itemId: hold.itemId, facilityId: hold.facilityId }]) : undefined,
    );
    // What the next new reservation of this item and facility is checked against in memory (DirectHolds):
    // remembered before the checks, so that one refused here is refused there too, without a statement.
    const known = items.get(hold.itemId);
    if (known && facility) this.facts.rememberHold(this.uow.tenantId, known, facility);
    const item = this.refs.stockItem(items, hold.itemId, at(hold.field, 'itemId'), 'new');
    this.refs.checkFacility(facility, at(hold.field, 'facilityId'), 'new');
    const qty = positiveQty(hold.qty, item, at(hold.field, 'qty'));
    // Releasing expired holds changes the position: its prelocked values are then stale.
    const released = await this.releaseLapsed([{ itemId: item.id, facilityId: hold.facilityId }]);
    const counters = (await this.checkReserved(item, hold.facilityId, qty, at(hold.field, 'qty'), released ? undefined : prelocked))!;
    const id = timeOrderedId();
    const tenant = this.uow.tenantId;
    const user = this.uow.userId;
    const statement = sql`WITH ${counters.ctes}, n AS (${nextNumberSql(tenant, 'RS', AFTER_COUNTERS)}),
         r AS (
           INSERT INTO reservations (tenant_id, id, reservation_no, item_id, facility_id, qty, status, demand_type,
                                     demand_id, demand_line_id, expires_at, notes, created_by, updated_by)
           SELECT ${tenant}, ${id}, n.no, ${item.id}, ${hold.facilityId}, ${decimalText(qty)}, 'open', ${hold.demandType ?? 'manual'}, ${hold.demandId ?? null},
                  ${hold.demandLineId ?? null}, ${hold.expiresAt ?? null}, ${hold.notes ?? null}, ${user}, ${user} FROM n
           RETURNING *)
         SELECT ${raw(RESERVATION_NOW)}, ${raw(LAPSED)} AS lapsed FROM r`;
    const insert = () => query<Array<ReservationRow & { lapsed: boolean }>>(this.m, statement, GENERIC);
    const [{ lapsed, ...row }] = ending.last && !hold.expiresAt ? await this.uow.commitWith(insert) : await insert();
    if (!lapsed) return { id, row };
    await this.releaseIfLapsed(id);
    return { id };
  }

  /**
   * Several holds, all or nothing (a sales order's open, a work order's release): every hold is checked
   * against its facility's available-to-promise first, and a shortage anywhere is one 409
   * insufficient_stock whose details name every short hold (holds of one item and facility are judged
   * together). Then each is reserved; a race lost in between still ends in 409 from the counters.
   */
  async reserveAll(holds: Hold[]): Promise<string[]> {
    const items = await this.refs.items(holds.map((h) => h.itemId));
    const wanted = new Map<string, { itemId: string; facilityId: string; qty: Decimal; holds: Array<{ hold: Hold; item: ItemRef; qty: Decimal }> }>();
    for (const hold of holds) {
      const item = this.refs.stockItem(items, hold.itemId, at(hold.field, 'itemId'), 'new');
      const qty = positiveQty(hold.qty, item, at(hold.field, 'qty'));
      const key = positionKey(hold);
      const w = wanted.get(key) ?? { itemId: item.id, facilityId: hold.facilityId, qty: toQty(0), holds: [] };
      w.qty = w.qty.plus(qty);
      w.holds.push({ hold, item, qty });
      wanted.set(key, w);
    }
    const groups = [...wanted.values()];
    const [itemIds, facilityIds] = [groups.map((g) => g.itemId), groups.map((g) => g.facilityId)];
    // The positions are locked here, all of them and in lock order: each `reserve` below takes the RS number
    // row, after which no position may be locked (a batch of new reservations holds its positions while it
    // waits for that row: DirectHolds).
    const rows: Array<{ item_id: string; facility_id: string; atp: string }> = await query(
      this.m,
      sql`WITH lp AS MATERIALIZED (
         SELECT p.item_id, p.facility_id, p.qty_available_on_hand, p.qty_allocated, p.qty_reserved
           FROM inventory_positions p
          WHERE p.tenant_id = ${this.uow.tenantId} AND (p.item_id, p.facility_id) IN (SELECT * FROM unnest(${itemIds}::uuid[], ${facilityIds}::uuid[]))
          ORDER BY p.item_id, p.facility_id
            FOR UPDATE OF p),
       ${lapsedHolds(this.uow.tenantId)}
       SELECT k.item_id, k.facility_id,
              coalesce(p.qty_available_on_hand - p.qty_allocated - p.qty_reserved, 0) + coalesce(h.allocated + h.reserved, 0) AS atp
         FROM unnest(${itemIds}::uuid[], ${facilityIds}::uuid[]) AS k(item_id, facility_id)
         LEFT JOIN lp p ON p.item_id = k.item_id AND p.facility_id = k.facility_id
         LEFT JOIN lapsed_holds h ON h.item_id = k.item_id AND h.facility_id = k.facility_id
        -- lp is read whole, whatever the join's plan: every position is locked, not only those it probed
        WHERE (SELECT count(*) FROM lp) >= 0`,
    );
    const atp = new Map(rows.map((r) => [positionKey({ itemId: r.item_id, facilityId: r.facility_id }), toQty(r.atp)]));
    const short = groups.flatMap((g) => {
      const available = Decimal.max(atp.get(positionKey(g)) ?? 0, 0);
      if (!g.qty.gt(available)) return [];
      return g.holds.map(({ hold, item, qty }) => ({
        field: hold.field, message: 'exceeds the available-to-promise quantity', itemId: item.id, itemNo: item.itemNo,
        facilityId: hold.facilityId, requested: qty.toNumber(), available: available.toNumber(),
      }));
    });
    if (short.length) throw shortage(short);
    const ids: string[] = [];
    for (const hold of holds) ids.push((await this.reserve(hold)).id);
    return ids;
  }

  /** Changes an open reservation: quantity (not below allocated + fulfilled; more is new work, checked against ATP), expiry, notes. */
  async update(id: string, change: { qty?: Decimal.Value; expiresAt?: Date | null; notes?: string | null }, ifMatch?: number): Promise<void> {
    const [r] = await this.lock([id], 'change', ifMatch);
    let newQty = toQty(r.qty);
    if (change.qty !== undefined) {
      const more = toQty(change.qty).gt(r.qty);
      const item = await this.refs.oneStockItem(r.item_id, 'itemId', more ? 'new' : 'committed');
      if (more) await this.refs.facility(r.facility_id, 'facilityId', 'new');
      newQty = positiveQty(change.qty, item, 'qty');
      const held = toQty(r.qty_allocated).plus(r.qty_fulfilled);
      if (newQty.lessThan(held)) throw invalidField('qty', `must not be below the allocated and fulfilled quantity (${held.toFixed()})`);
      if (more) await this.releaseLapsed([{ itemId: r.item_id, facilityId: r.facility_id }]);
      const delta = newQty.minus(r.qty);
      if (!delta.isZero()) await this.changeReserved(item, r.facility_id, delta, 'qty');
    }
    // The row is locked above (with its lapsed state, which the repository's lockVersion does not read).
    await this.uow.repository(Reservation).touch(id, {
      qty: decimalText(newQty),
      expiresAt: change.expiresAt !== undefined ? change.expiresAt : r.expires_at,
      notes: change.notes !== undefined ? change.notes : r.notes,
      status: statusOf(newQty, toQty(r.qty_allocated), toQty(r.qty_fulfilled)),
    });
    if (change.expiresAt) await this.releaseIfLapsed(id);
  }

  /** Releases or cancels an open or allocated reservation: everything it holds is freed. */
  async release(id: string, outcome: 'released' | 'cancelled', ifMatch?: number): Promise<void> {
    const rows = await this.lock([id], outcome === 'released' ? 'release' : 'cancel', ifMatch);
    await this.free(rows, outcome);
  }

  /**
   * Closes reservations as fulfilled for what they have issued, freeing any rest (e.g. a short shipment):
   * one lock pass for all of them (reservations, then their counters in lock order).
   */
  async close(ids: string[]): Promise<void> {
    if (!ids.length) return;
    const open = (await this.lock(ids)).filter((r) => RESERVATION.allows('release', r.status));
    if (!open.length) return;
    const { balances, positions } = await this.freeing(open);
    await this.counters.apply(balances, () => true, positions);
    const fulfilled = open.filter((r) => toQty(r.qty_fulfilled).gt(0));
    await this.markFreed(fulfilled, 'fulfilled');
    await this.markFreed(open.filter((r) => !fulfilled.includes(r)), 'released');
  }

  /** Releases or cancels those of several reservations that still hold stock (a document's cancel), in one lock pass. */
  async releaseAll(ids: string[], outcome: 'released' | 'cancelled'): Promise<void> {
    if (!ids.length) return;
    const rows = await this.lockRows(ids);
    await this.free(rows.filter((r) => !r.lapsed && RESERVATION.allows('release', r.status)), outcome);
  }

  /** Reservation rows locked in id order, each with whether it has lapsed (expired, not yet released). */
  private lockRows(ids: string[]): Promise<Array<ReservationRow & { lapsed: boolean }>> {
    return query(
      this.m,
      sql`SELECT ${raw(RESERVATION_COLUMNS)}, ${raw(LAPSED)} AS lapsed FROM reservations r WHERE r.tenant_id = ${this.uow.tenantId} AND r.id = ANY(${ids}::uuid[]) ORDER BY r.id FOR UPDATE`,
      GENERIC,
    );
  }

  /**
   * Locks reservations (in id order) for the rest of the unit of work and checks If-Match and that
   * `action` is allowed. One whose expiresAt has passed reads as released, whatever its row still says,
   * so no action applies to it: acting on it would free or issue its holds a second time.
   */
  async lock(ids: string[], action?: Parameters<typeof RESERVATION.check>[0], ifMatch?: number, field?: (id: string) => string): Promise<ReservationRow[]> {
    const rows = await this.lockRows(ids);
    const byId = new Map(rows.map((x) => [x.id, x]));
    return ids.map((id) => {
      const r = byId.get(id);
      // An unknown reservation named in a posting's line is an unknown reference: 404 naming the field.
      if (!r) throw field ? unknownReference(field(id)) : notFound('Reservation');
      assertVersion(r.version, ifMatch);
      if (r.lapsed) throw invalidState(`Reservation ${r.reservation_no} is released: it expired at ${r.expires_at!.toISOString()}`);
      if (action) RESERVATION.check(action, r.status, r.reservation_no);
      return r;
    });
  }

  /** Reserved quantity of a position; more than available-to-promise → 409 naming the item and facility. */
  async changeReserved(item: ItemRef, facilityId: string, delta: Decimal, field: string): Promise<void> {
    const write = await this.checkReserved(item, facilityId, delta, field);
    if (write) await this.counters.write(write);
  }

  /** `changeReserved`'s lock and check; the write is left to the caller's next statement (Counters.check). */
  private checkReserved(item: ItemRef, facilityId: string, delta: Decimal, field: string, prelocked?: CounterRows): Promise<CounterWrite | undefined> {
    return this.counters.check([], () => true, [{
      itemId: item.id,
      facilityId,
      reserved: delta,
      detail: (requested, available) => ({ field, message: 'exceeds the available-to-promise quantity', itemId: item.id, itemNo: item.itemNo, facilityId, requested: requested.toNumber(), available: available.toNumber() }),
    }], prelocked).catch((err: unknown) => {
      if (!(err instanceof AppError) || err.code !== 'insufficient_stock') throw err;
      const d = err.details![0];
      throw insufficientStock(`Insufficient stock of ${item.itemNo} to reserve: requested ${d.requested}, available to promise ${d.available}`, err.details);
    });
  }

  /** Frees what locked reservations hold (allocations, open reserved quantity) and sets their final status. */
  async free(reservations: ReservationRow[], outcome: 'released' | 'cancelled' | 'fulfilled'): Promise<void> {
    if (!reservations.length) return;
    const { balances, positions } = await this.freeing(reservations);
    await this.counters.apply(balances, () => true, positions);
    await this.markFreed(reservations, outcome);
  }

  /**
   * The counter changes that free what locked reservations hold — for a caller that applies them with
   * its own changes in one `Counters.apply` (one lock pass in lock order), then calls `markFreed`.
   * Allocations pin only Available statuses (a status's isAvailable never changes), so every freed
   * allocation frees the position's allocated quantity too.
   */
  async freeing(reservations: ReservationRow[]): Promise<{ balances: BalanceDelta[]; positions: PositionDelta[] }> {
    if (!reservations.length) return { balances: [], positions: [] };
    const allocations: Array<AllocationRow & { facility_id: string; status_id: string }> = await query(
      this.m,
      sql`SELECT ${raw(ALLOCATION_COLUMNS)}, b.facility_id, b.status_id
         FROM allocations a JOIN balances b ON b.tenant_id = a.tenant_id AND b.id = a.balance_id
        WHERE a.tenant_id = ${this.uow.tenantId} AND a.reservation_id = ANY(${reservations.map((r) => r.id)}::uuid[]) AND a.status = 'active'`,
      GENERIC,
    );
    return {
      balances: allocations.map((a) => ({
        itemId: a.item_id, facilityId: a.facility_id, locationId: a.location_id, lotId: a.lot_id, statusId: a.status_id,
        onHand: new Qty(0), allocated: toQty(a.qty).negated(),
      })),
      positions: reservations.map((r) => ({
        itemId: r.item_id, facilityId: r.facility_id, reserved: toQty(r.qty).minus(r.qty_allocated).minus(r.qty_fulfilled).negated(),
      })),
    };
  }

  /** Final status of freed reservations; their allocations released. */
  async markFreed(reservations: ReservationRow[], outcome: 'released' | 'cancelled' | 'fulfilled'): Promise<void> {
    if (!reservations.length) return;
    const ids = reservations.map((r) => r.id);
    await query(
      this.m,
      sql`UPDATE allocations SET status = 'released', updated_at = now() WHERE tenant_id = ${this.uow.tenantId} AND reservation_id = ANY(${ids}::uuid[]) AND status = 'active'`,
      GENERIC,
    );
    await query(
      this.m,
      sql`UPDATE reservations SET status = ${outcome}, qty_allocated = 0, version = version + 1, updated_by = ${this.uow.userId}, updated_at = now()
        WHERE tenant_id = ${this.uow.tenantId} AND id = ANY(${ids}::uuid[])`,
      GENERIC,
    );
  }

  /**
   * Locks the lapsed reservations of (item, facility) positions: those expired that the job has not
   * released yet. One that another unit of work holds is skipped (that one will free or act on it).
   */
  async lapsedAt(positions: Array<{ itemId: string; facilityId: string }>): Promise<ReservationRow[]> {
    const keys = [...new Map(positions.map((p) => [positionKey(p), p])).values()];
    if (!keys.length) return [];
    // On every outbound posting: prepared, with explicit columns, and run with its generic plan.
    return query(
      this.m,
      sql`SELECT ${raw(RESERVATION_COLUMNS)} FROM reservations r WHERE r.tenant_id = ${this.uow.tenantId} AND ${raw(LAPSED)}
          AND (r.item_id, r.facility_id) IN (SELECT * FROM unnest(${keys.map((k) => k.itemId)}::uuid[], ${keys.map((k) => k.facilityId)}::uuid[])) FOR UPDATE SKIP LOCKED`,
      GENERIC,
    );
  }

  /** Releases the lapsed reservations of positions, so they block neither a posting nor a new hold. */
  /** Returns how many were released. */
  async releaseLapsed(positions: Array<{ itemId: string; facilityId: string }>): Promise<number> {
    const lapsed = await this.lapsedAt(positions);
    await this.free(lapsed, 'released');
    await this.expired(lapsed);
    return lapsed.length;
  }

  /** Every lapsed reservation of the tenant, at most 1000 at a time (the expiry job); returns how many were released. */
  async sweep(): Promise<number> {
    const due = await this.lapsed(sql`true ORDER BY r.id LIMIT 1000`);
    await this.free(due, 'released');
    await this.expired(due);
    return due.length;
  }

  /**
   * `reservation.updated` (action `expire`) for reservations just released because they expired; data: each
   * as its GET returns it (released: no active allocations).
   */
  async expired(reservations: ReservationRow[]): Promise<void> {
    if (!reservations.length) return;
    const tenant = this.uow.tenantId;
    await query(
      this.m,
      recordEventsSql(tenant, { type: 'reservation.updated', action: 'expire', subjectType: 'reservation' }, sql`SELECT r.id AS subject_id, jsonb_build_object(
          'id', r.id, 'reservationNo', r.reservation_no, 'itemId', r.item_id, 'facilityId', r.facility_id, 'qty', r.qty, 'qtyAllocated', r.qty_allocated,
          'qtyFulfilled', r.qty_fulfilled, 'status', r.status, 'demandType', r.demand_type, 'demandId', r.demand_id, 'demandLineId', r.demand_line_id,
          'expiresAt', ${isoText('r.expires_at')}, 'notes', r.notes, 'allocations', '[]'::jsonb, 'version', r.version, 'createdBy', r.created_by,
          'updatedBy', r.updated_by, 'createdAt', ${isoText('r.created_at')}, 'updatedAt', ${isoText('r.updated_at')}) AS data
        FROM reservations r WHERE r.tenant_id = ${tenant} AND r.id = ANY(${reservations.map((r) => r.id)}::uuid[])`),
      GENERIC,
    );
  }

  /** A reservation this unit of work just gave a past expiresAt holds nothing from now on. */
  private async releaseIfLapsed(id: string): Promise<void> {
    const lapsed = await this.lapsed(sql`r.id = ${id}`);
    await this.free(lapsed, 'released');
    await this.expired(lapsed);
  }

  /** Lapsed reservations matching `where`, locked, skipping those another unit of work holds. */
  private lapsed(where: Sql): Promise<ReservationRow[]> {
    return query(this.m, sql`SELECT ${raw(RESERVATION_COLUMNS)} FROM reservations r WHERE r.tenant_id = ${this.uow.tenantId} AND ${raw(LAPSED)} AND ${where} FOR UPDATE SKIP LOCKED`);
  }
}
