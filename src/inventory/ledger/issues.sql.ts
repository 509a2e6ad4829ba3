import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { insufficientStock, invalidField } from '../../common/errors';
import { query, sql } from '../../database/sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { qty as toQty, sql as numeric } from '../../documents/quantity';
import { at } from '../../documents/references.sql';
import { HeldStock, planIssue } from './allocation-planner';
import { Holds, statusOf } from './holds.sql';
import { IssueLine } from './posting';
import { ConcreteLine } from './posting-lines';
import { ReservationRow } from './views';

/** What the reservations a posting consumes must allow, and the If-Match a single one is held to. */
export interface HoldCheck {
  action: 'issue' | 'fulfill';
  ifMatch?: number;
}

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

  async plan(lines: IssueLine[], check: HoldCheck = { action: 'issue' }): Promise<{ concrete: ConcreteLine[][]; plan: IssuePlan }> {
    const ids = [...new Set(lines.map((l) => l.reservationId))];
    const firstLine = new Map<string, IssueLine>();
    for (const l of lines) if (!firstLine.has(l.reservationId)) firstLine.set(l.reservationId, l);
    const fieldOf = (id: string) => at(firstLine.get(id)!.field, 'reservationId');
    const reservations = await this.holds.lock(ids, check.action, check.ifMatch, fieldOf);
    const held: Array<HeldStock & { reservation_id: string }> = (
      await query(
        this.m,
        sql`SELECT a.id, a.reservation_id, a.balance_id, a.location_id, l.code, a.lot_id, to_char(t.expiry_date, 'YYYY-MM-DD') AS expiry, b.status_id, a.qty
           FROM allocations a
           JOIN balances b ON b.tenant_id = a.tenant_id AND b.id = a.balance_id
           JOIN locations l ON l.tenant_id = a.tenant_id AND l.id = a.location_id
           LEFT JOIN lots t ON t.tenant_id = a.tenant_id AND t.id = a.lot_id
          WHERE a.tenant_id = ${this.uow.tenantId} AND a.reservation_id = ANY(${ids}::uuid[]) AND a.status = 'active'`,
      )
    ).map((a: Record<string, string>) => ({
      allocationId: a.id, reservation_id: a.reservation_id, balanceId: a.balance_id, locationId: a.location_id, locationCode: a.code,
      lotId: a.lot_id, expiryDate: a.expiry, statusId: a.status_id, qty: toQty(a.qty),
    }));
    const serials = await this.serialsAt(lines, reservations);
    const takes: IssuePlan['takes'] = [];
    const byId = new Map(reservations.map((r) => [r.id, r]));
    const heldBy = new Map<string, typeof held>();
    for (const a of held) heldBy.set(a.reservation_id, [...(heldBy.get(a.reservation_id) ?? []), a]);
    const concrete = lines.map((line, i) => {
      const r = byId.get(line.reservationId)!;
      const qtyField = at(line.field, line.qtyField ?? 'qty');
      if (line.qty !== undefined && !toQty(line.qty).gt(0)) throw invalidField(qtyField, 'must be > 0');
      const mine = heldBy.get(r.id) ?? [];
      const named = line.serialNos?.length ? serialTakes(line, mine, serials[i]) : undefined;
      const { takes: taken, shortfall } = named ?? planIssue(mine, line.qty, line);
      if (shortfall.gt(0) || !taken.length) {
        const wanted = toQty(line.qty ?? 0);
        const what = line.qty === undefined ? 'anything' : wanted.toFixed();
        throw insufficientStock(`Reservation ${r.reservation_no} has ${wanted.minus(shortfall).toFixed()} allocated${line.locationId || line.lotId ? ' there' : ''}; cannot issue ${what}`, [
          { field: qtyField, message: 'more than is allocated', itemId: r.item_id, requested: wanted.toNumber(), available: wanted.minus(shortfall).toNumber() },
        ]);
      }
      return taken.map(({ from, qty, serialNos }: { from: HeldStock; qty: Decimal; serialNos?: string[] }): ConcreteLine => {
        // What this line took is gone from the allocation for the posting's next lines.
        from.qty = toQty(from.qty).minus(qty);
        takes.push({ reservationId: r.id, allocationId: from.allocationId, qty });
        return {
          itemId: r.item_id, locationId: from.locationId, lotId: from.lotId, statusId: from.statusId,
          qty: qty.negated(), allocatedDelta: qty.negated(),
          serialNos, pickSerials: !serialNos, field: line.field, qtyField: line.qtyField,
        };
      });
    });
    return { concrete, plan: { reservations, takes } };
  }

  /** Where each named serial is in stock now (one query for the posting), per issue line. */
  private async serialsAt(lines: IssueLine[], reservations: ReservationRow[]): Promise<Array<Map<string, SerialPlace>>> {
    const wanted = lines.flatMap((l) => (l.serialNos ?? []).map((serialNo) => ({ itemId: reservations.find((r) => r.id === l.reservationId)!.item_id, serialNo })));
    const rows: Array<SerialPlace & { item_id: string; serial_no: string }> = wanted.length
      ? await query(
          this.m,
          sql`SELECT item_id, serial_no, location_id AS "locationId", lot_id AS "lotId", status_id AS "statusId" FROM serials
            WHERE tenant_id = ${this.uow.tenantId} AND in_stock
              AND (item_id, serial_no) IN (SELECT * FROM unnest(${wanted.map((w) => w.itemId)}::uuid[], ${wanted.map((w) => w.serialNo)}::text[]))`,
        )
      : [];
    return lines.map((l) => {
      const itemId = reservations.find((r) => r.id === l.reservationId)!.item_id;
      return new Map(rows.filter((r) => r.item_id === itemId && (l.serialNos ?? []).includes(r.serial_no)).map((r) => [r.serial_no, r]));
    });
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
    await query(
      this.m,
      sql`UPDATE allocations a SET qty = a.qty - k.qty, qty_issued = a.qty_issued + k.qty,
              status = CASE WHEN a.qty - k.qty = 0 THEN 'issued' ELSE a.status END, updated_at = now()
         FROM unnest(${[...perAllocation.keys()]}::uuid[], ${[...perAllocation.values()].map(numeric)}::numeric[]) AS k(id, qty)
        WHERE a.tenant_id = ${this.uow.tenantId} AND a.id = k.id`,
    );
    const changed = reservations.filter((r) => perReservation.has(r.id)).map((r) => {
      const issued = perReservation.get(r.id)!;
      const allocated = toQty(r.qty_allocated).minus(issued);
      const fulfilled = toQty(r.qty_fulfilled).plus(issued);
      return { id: r.id, allocated, fulfilled, status: statusOf(toQty(r.qty), allocated, fulfilled) };
    });
    await query(
      this.m,
      sql`UPDATE reservations r SET qty_allocated = k.allocated, qty_fulfilled = k.fulfilled, status = k.status,
              version = r.version + 1, updated_by = ${this.uow.userId}, updated_at = now()
         FROM unnest(${changed.map((c) => c.id)}::uuid[], ${changed.map((c) => numeric(c.allocated))}::numeric[],
                     ${changed.map((c) => numeric(c.fulfilled))}::numeric[], ${changed.map((c) => c.status)}::text[]) AS k(id, allocated, fulfilled, status)
        WHERE r.tenant_id = ${this.uow.tenantId} AND r.id = k.id`,
    );
  }
}

interface SerialPlace {
  locationId: string;
  lotId: string | null;
  statusId: string;
}

/**
 * Named serials are issued from the allocation where each one is: one unit per serial, grouped by
 * allocation. Every serial must be in stock at a place the reservation holds, once; their count is the
 * line's quantity.
 */
function serialTakes(line: IssueLine, held: HeldStock[], places: Map<string, SerialPlace>) {
  const serialNos = line.serialNos!;
  const field = at(line.field, 'serialNos');
  if (new Set(serialNos).size !== serialNos.length) throw invalidField(field, 'must not repeat a serial number');
  if (line.qty !== undefined && !toQty(line.qty).eq(serialNos.length))
    throw invalidField(field, `must list one serial number per unit (${toQty(line.qty).toFixed()})`);
  const missing = serialNos.filter((s) => !places.has(s));
  if (missing.length) throw invalidField(field, `not in stock: ${missing.join(', ')}`);
  const takes = new Map<HeldStock, string[]>();
  for (const serialNo of serialNos) {
    const p = places.get(serialNo)!;
    const from = held.find(
      (a) => a.locationId === p.locationId && a.lotId === p.lotId && a.statusId === p.statusId &&
        (!line.locationId || a.locationId === line.locationId) && toQty(a.qty).gt(takes.get(a)?.length ?? 0),
    );
    if (!from) throw invalidField(field, `${serialNo} is not at a location (and lot) the reservation has allocated stock at`);
    takes.set(from, [...(takes.get(from) ?? []), serialNo]);
  }
  return { takes: [...takes].map(([from, s]) => ({ from, qty: toQty(s.length), serialNos: s })), shortfall: toQty(0) };
}
