import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { ErrorDetail, invalidField } from '../../common/errors';
import { UUID_PATTERN } from '../../common/uuid';
import { qty as toQty } from '../../documents/quantity';
import { at, CatalogRefs, ItemRef, LocationRef, StatusRef, Use } from '../../documents/references.sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { LineRefs, PostingFacts } from './posting-facts';
import { checkBaseDecimals, checkLot, checkSerials } from '../../documents/tracking';
import { shortage } from './counter-changes';
import { CounterRows, Counters } from './counters.sql';
import { FoundLot, Lots } from './lots.sql';
import { PostingLine } from './posting';

/** A line to post with the quantity it takes from allocations (≤ 0; issue lines only). */
export interface ConcreteLine extends PostingLine {
  allocatedDelta?: Decimal;
}

/** A posting line after validation: every reference resolved, quantities exact. */
export interface ResolvedLine {
  field?: string;
  qtyField: string;
  item: ItemRef;
  location: LocationRef;
  status: StatusRef;
  lot: FoundLot | null;
  qty: Decimal;
  allocatedDelta: Decimal;
  serialNos: string[];
  pickSerials: boolean;
}

/** Where a shortage of `l` points, with what it asked for and what there was. */
export function lineDetail(l: ResolvedLine, requested: Decimal, available: Decimal): ErrorDetail {
  return {
    field: at(l.field, l.qtyField),
    message: 'not enough stock',
    itemId: l.item.id,
    itemNo: l.item.itemNo,
    locationId: l.location.id,
    facilityId: l.location.facilityId,
    lotId: l.lot?.id ?? null,
    statusId: l.status.id,
    requested: requested.toNumber(),
    available: Decimal.max(available, 0).toNumber(),
  };
}

/**
 * Checks posting lines against the catalog and the tracking rules — one query per kind of reference
 * for the whole posting — and finds or creates their lots.
 */
@Injectable()
export class PostingLines {
  constructor(
    private readonly refs: CatalogRefs,
    private readonly lots: Lots,
    private readonly counters: Counters,
    private readonly facts: PostingFacts,
    private readonly uow: UnitOfWork,
  ) {}

  /**
   * The lines resolved, and the counter rows their look-up statement read ahead (Counters.prelock; not
   * when a line names a lot by number, whose lot may not exist yet): locked, or — for a posting of one
   * free line without serials, on a unit of work's first attempt — read without a lock (an optimistic
   * posting, Counters.check).
   */
  async resolve(lines: ConcreteLine[], startsWork: boolean): Promise<{ resolved: ResolvedLine[]; known?: CounterRows }> {
    const use = startsWork ? 'new' : 'committed';
    // Not when a line names a lot by number: its lot may be created below, and its balance would then be
    // locked after the other lines' positions (out of lock order), so the posting locks everything later.
    const keys = lines.map((l) => ({ itemId: l.itemId, locationId: l.locationId, lotId: l.lotId ?? null, statusId: l.statusId ?? null }));
    const prelock =
      !lines.some((l) => l.lotNo) && keys.every((k) => [k.itemId, k.locationId, k.lotId, k.statusId].every((id) => id === null || UUID_PATTERN.test(id)));
    // Serial rows are locked between the look-up and the journal statement: a posting that moves serials
    // locks its counters first (the lock order), so it is never optimistic.
    const [only] = lines;
    const optimistic = lines.length === 1 && !only.allocatedDelta && !only.serialNos?.length && !only.pickSerials && this.counters.optimistic;
    const { items, locations, statuses, rider: known } = await this.refs.forPosting(
      lines.map((l) => l.itemId),
      lines.map((l) => l.locationId),
      prelock ? this.counters.prelock(keys, !optimistic) : undefined,
    );
    const refs = { items, locations, statuses };
    // A line's own use, where it states one (a move's outbound line), else the posting's.
    const resolved = lines.map((line) => this.checkLine(line, refs, line.use ?? use));
    // An inbound line never creates a lot number that an outbound line of the posting takes stock of (a
    // move keeps its lot): when that lot does not exist, the outbound line is short of it (409 below).
    const takenOut = new Set(lines.flatMap((l, i) => (resolved[i].qty.lt(0) && l.lotNo ? [`${l.itemId}|${l.lotNo}`] : [])));
    const lots = await this.lots.resolve(
      resolved.map((r, i) => ({ item: r.item, lotId: lines[i].lotId, lotNo: lines[i].lotNo, expiryDate: lines[i].expiryDate, field: r.field })),
      (i) => resolved[i].qty.gt(0) && !takenOut.has(`${lines[i].itemId}|${lines[i].lotNo}`),
    );
    resolved.forEach((r, i) => {
      const lot = lots[i];
      // An outbound line naming a lot number that was never received has no stock of it.
      if (lot === undefined) throw shortage([{ ...lineDetail(r, r.qty.abs(), toQty(0)), message: `no stock of lot ${lines[i].lotNo}` }]);
      r.lot = lot;
    });
    // What these lines were checked against, for the one-statement adjustment (PostingFacts).
    this.facts.remember(this.uow.tenantId, refs);
    return { resolved, known };
  }

  /**
   * A line's rules, in memory, against the master data it names: a known stock item, active for new work
   * (as its location and facility), a known status, a quantity other than 0 within the base unit's
   * decimals, serial numbers and lot as the item's tracking asks. The one definition of them: the full
   * path runs it on what it just looked up, the one-statement adjustment on what the full path last
   * looked up (PostingFacts), whose versions its statement checks.
   */
  checkLine(line: ConcreteLine, refs: LineRefs, use: Use): ResolvedLine {
    const f = line.field;
    const qtyField = line.qtyField ?? 'qty';
    const item = this.refs.stockItem(refs.items, line.itemId, at(f, 'itemId'), use);
    const location: LocationRef = this.refs.location(refs.locations, line.locationId, at(f, 'locationId'), use);
    const status = this.refs.status(refs.statuses, line.statusId, at(f, 'statusId'));
    const qty = toQty(line.qty);
    if (qty.isZero()) throw invalidField(at(f, qtyField), 'must not be 0');
    checkBaseDecimals(item, qty, at(f, qtyField));
    const pickSerials = !!line.pickSerials && qty.lt(0);
    const serialNos = checkSerials(item, qty, line.serialNos, f, { qtyField, mayPick: pickSerials });
    checkLot(item, line, f);
    return { field: f, qtyField, item, location, status, lot: null, qty, allocatedDelta: line.allocatedDelta ?? toQty(0), serialNos, pickSerials };
  }
}
