import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { AppError, ErrorDetail, invalidField, unknownReference } from '../common/errors';
import { given } from '../documents/fields';
import { qty as toQty, sum } from '../documents/quantity';
import { CatalogRefs, ItemRef } from '../documents/references.sql';
import { checkLotOfItem } from '../documents/tracking';
import { UomConversion } from '../documents/uom-conversion.sql';
import { LedgerService } from '../inventory/ledger/ledger.service';
import { AllocationRequest } from '../inventory/ledger/allocations.sql';
import { ReservationView } from '../inventory/ledger/views';
import { SalesOrder, SalesOrderLine } from './sales-order.entity';
import { HOLDING } from './sales-order-views';
import { ShipLineDto } from './sales.dto';

/** What one ship call takes from one order line: in the line's UOM and in base units. */
export interface Shipping {
  line: SalesOrderLine;
  item: ItemRef;
  qty: Decimal;
  base: Decimal;
  field: string;
  locationId?: string;
  lotId?: string;
  serialNos?: string[];
}

/** What a line's reservation still has to give, as this ship call plans it. */
interface HoldLeft {
  view: ReservationView;
  /** Allocated stock not yet taken by an earlier line of this call; `anywhere` for what automatic allocation will pin. */
  allocations: Array<{ locationId: string | null; lotId: string | null; qty: Decimal; anywhere?: boolean }>;
  unallocated: Decimal;
}

/**
 * What a ship call takes from an order's lines, and the holds' side of it: allocating what they do not
 * cover before the posting, closing the ones a completed line leaves holding after it.
 */
@Injectable()
export class SalesShipping {
  constructor(
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
    private readonly ledger: LedgerService,
  ) {}

  /**
   * The lines of a ship body: each a line of this order (404 naming the field); stock fields only on
   * stock lines (400); together at most what is outstanding per line (409 naming the line). Base
   * quantities never exceed what the line still has to ship in base units, and the call that completes
   * a line ships exactly its rest (so rounding up partial quantities cannot overdraw the hold).
   */
  async requested(o: SalesOrder, lines: SalesOrderLine[], items: Map<string, ItemRef>, body: ShipLineDto[]): Promise<Shipping[]> {
    const byId = new Map(lines.map((l) => [l.id, l]));
    const locations = await this.refs.locations(body.map((s) => s.locationId).filter((x): x is string => !!x));
    const lots = await this.refs.lots(body.map((s) => s.lotId).filter((x): x is string => !!x));
    const taken = new Map<string, { qty: Decimal; base: Decimal }>();
    const over: ErrorDetail[] = [];
    const shipping: Shipping[] = [];
    for (const [i, s] of body.entries()) {
      const f = `lines[${i}]`;
      const line = byId.get(s.lineId);
      if (!line) throw unknownReference(`${f}.lineId`);
      const item = items.get(line.itemId)!;
      if (!line.reservationId) {
        for (const k of ['locationId', 'lotId', 'serialNos'] as const)
          if (given(s[k])) throw invalidField(`${f}.${k}`, `must not be given: line ${line.lineNo} (${item.itemNo}, ${item.kind}) holds no stock`);
      }
      if (given(s.serialNos) && !item.serialTracked) throw invalidField(`${f}.serialNos`, `must be empty: ${item.itemNo} is not serial-tracked`);
      // Shipping finishes committed work: an inactive location or item is not refused.
      if (s.locationId) this.refs.location(locations, s.locationId, `${f}.locationId`, 'committed', o.facilityId);
      if (s.lotId) {
        if (!item.lotTracked) throw invalidField(`${f}.lotId`, `must be empty: ${item.itemNo} is not lot-tracked`);
        checkLotOfItem(lots.find((l) => l.id === s.lotId), item, `${f}.lotId`);
      }
      // In the line's unit at the line's own ratio: an open order ships as it was committed (and reserved),
      // whatever has become of the item's conversions since.
      const converted = await this.uoms.toBaseOfLine(item, line, s.qty, `${f}.qty`);
      const before = taken.get(line.id) ?? { qty: toQty(0), base: toQty(0) };
      const qty = before.qty.plus(s.qty);
      const left = toQty(line.qty).minus(line.qtyShipped);
      if (qty.gt(left)) {
        over.push({ field: `${f}.qty`, message: 'exceeds the outstanding quantity', lineId: line.id, lineNo: line.lineNo, requested: qty.toNumber(), outstanding: left.toNumber() });
        continue;
      }
      const baseLeft = toQty(line.qtyBase).minus(line.qtyShippedBase).minus(before.base);
      const base = qty.eq(left) ? baseLeft : Decimal.min(converted, baseLeft);
      taken.set(line.id, { qty, base: before.base.plus(base) });
      shipping.push({ line, item, qty: toQty(s.qty), base, field: f, locationId: s.locationId, lotId: s.lotId, serialNos: s.serialNos });
    }
    if (over.length) {
      const d = over[0];
      throw new AppError(409, 'invalid_state', `Sales order ${o.orderNo} line ${d.lineNo} has ${d.outstanding} outstanding; cannot ship ${d.requested}`, over);
    }
    return shipping;
  }

  /**
   * Allocates what the holds do not yet cover: at the line's location (and lot) when given, else the
   * hold's whole unallocated rest automatically. Planned over this call's lines in order, so several
   * lines of one hold add up; the posting then checks every issue exactly. The holds are locked first
   * (id order), and every allocation of the call is made in one pass that also locks the stock of the
   * holds that need none (LedgerService.allocateAll): the whole shipment takes its rows in the ledger's
   * one lock order, whatever the order of its lines.
   */
  async allocateFor(shipping: Shipping[]): Promise<Map<string, ReservationView>> {
    const ids = [...new Set(shipping.filter((s) => s.line.reservationId && s.base.gt(0)).map((s) => s.line.reservationId!))];
    const views = new Map((await this.ledger.lockedReservations(ids)).map((v) => [v.id, v]));
    const holds = new Map<string, HoldLeft>();
    const requests: AllocationRequest[] = [];
    for (const s of shipping) {
      const id = s.line.reservationId;
      if (!id || !s.base.gt(0)) continue;
      let h = holds.get(id);
      if (!h) {
        const view = views.get(id)!;
        // A hold that no longer holds is left to the posting, which refuses it naming its state.
        if (!HOLDING.includes(view.status)) continue;
        h = {
          view,
          allocations: view.allocations.map((a) => ({ locationId: a.locationId, lotId: a.lotId, qty: toQty(a.qty) })),
          unallocated: toQty(view.qty).minus(view.qtyAllocated).minus(view.qtyFulfilled),
        };
        holds.set(id, h);
      }
      const matching = h.allocations.filter((a) => a.anywhere || ((!s.locationId || a.locationId === s.locationId) && (!s.lotId || a.lotId === s.lotId)));
      const covered = sum(matching.map((a) => a.qty));
      const missing = Decimal.min(s.base.minus(covered), h.unallocated);
      if (missing.gt(0)) {
        if (s.locationId) {
          if (s.item.lotTracked && !s.lotId) throw invalidField(`${s.field}.lotId`, `is required to ship ${s.item.itemNo} from a location it is not yet allocated at: it is lot-tracked`);
          requests.push({ reservationId: id, pins: [{ locationId: s.locationId, lotId: s.lotId ?? null, qty: missing }], field: s.field });
          h.allocations.push({ locationId: s.locationId, lotId: s.lotId ?? null, qty: missing });
          h.unallocated = h.unallocated.minus(missing);
        } else {
          requests.push({ reservationId: id, field: s.field });
          h.allocations.push({ locationId: null, lotId: null, qty: h.unallocated, anywhere: true });
          h.unallocated = toQty(0);
        }
        matching.push(h.allocations[h.allocations.length - 1]);
      }
      // What this line takes is gone for the call's next lines.
      let left = s.base;
      for (const a of matching) {
        const take = Decimal.min(left, a.qty);
        a.qty = a.qty.minus(take);
        left = left.minus(take);
      }
    }
    await this.ledger.allocateAll(requests, [...holds.keys()]);
    return new Map([...holds].map(([id, h]) => [id, h.view]));
  }

  /**
   * A line this call completes has its hold closed: fulfilled already unless the hold was changed
   * since open (e.g. its quantity raised), in which case what it still holds is freed.
   */
  async closeCompleted(shipping: Shipping[], holds: Map<string, ReservationView>): Promise<void> {
    const shipped = new Map<string, Decimal>();
    const issued = new Map<string, Decimal>();
    for (const s of shipping) {
      shipped.set(s.line.id, (shipped.get(s.line.id) ?? toQty(0)).plus(s.qty));
      if (s.line.reservationId) issued.set(s.line.reservationId, (issued.get(s.line.reservationId) ?? toQty(0)).plus(s.base));
    }
    const stillHolding = [...new Map(shipping.map((s) => [s.line.id, s.line])).values()]
      .filter((l) => l.reservationId && holds.has(l.reservationId) && toQty(l.qtyShipped).plus(shipped.get(l.id)!).gte(l.qty))
      .map((l) => holds.get(l.reservationId!)!)
      .filter((h) => toQty(h.qtyFulfilled).plus(issued.get(h.id)!).lt(h.qty));
    await this.ledger.closeReservations(stillHolding.map((h) => h.id));
  }
}

/** Everything still outstanding on every line (a ship call without lines). */
export function outstanding(lines: SalesOrderLine[], items: Map<string, ItemRef>): Shipping[] {
  return lines
    .filter((l) => toQty(l.qty).gt(l.qtyShipped))
    .map((l) => ({
      line: l, item: items.get(l.itemId)!, qty: toQty(l.qty).minus(l.qtyShipped), base: toQty(l.qtyBase).minus(l.qtyShippedBase), field: `lines[${l.lineNo - 1}]`,
    }));
}
