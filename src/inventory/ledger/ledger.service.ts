import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { constraintOf, notFound, validationFailed } from '../../common/errors';
import { LostRace, UnitOfWork } from '../../database/unit-of-work';
import { AllocationRequest, Allocations } from './allocations.sql';
import { BalanceKey } from './counter-changes';
import { COUNTER_CONSTRAINTS, Counters } from './counters.sql';
import { DirectHolds } from './direct-holds.sql';
import { DirectPostings } from './direct.sql';
import { Holds } from './holds.sql';
import { HoldCheck, Issues } from './issues.sql';
import { Journal } from './journal.sql';
import { Adjustment, Ending, Hold, IssueLine, isIssue, Pin, Posting, PostingLine } from './posting';
import { lineDetail, PostingLines } from './posting-lines';
import { liveAllocations, reservationNow } from './reads.sql';
import { Serials } from './serials.sql';
import { reservationView, ReservationView, TransactionView } from './views';

/**
 * The ledger's one surface: postings and holds. The only writer of ledger transactions and lines,
 * balances, positions, lots, serials, reservations and allocations; other modules import only this
 * class. Every call runs in the caller's unit of work and never opens a transaction of its own.
 *
 * Rows are locked in one order across all calls — reservations (by id), balances, positions (Counters'
 * lock order), then the document counter — so concurrent units of work queue instead of deadlocking.
 * (Expired holds found in a posting's way are locked after its counters, without waiting: SKIP LOCKED;
 * the balances they free are locked last, a rare deadlock that the unit of work's retry absorbs.)
 * An adjustment-like posting goes the direct way (DirectPostings: one statement), and a single-line
 * posting writes counter rows it read without a lock (Counters.check): both lock them only for their
 * last statement and the COMMIT, and a race they lose runs the unit of work again, locking first.
 * The database's CHECK constraints are the last word on every invariant (CONTRACT §5).
 */
@Injectable()
export class LedgerService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly lines: PostingLines,
    private readonly counters: Counters,
    private readonly serials: Serials,
    private readonly journal: Journal,
    private readonly holds: Holds,
    private readonly allocations: Allocations,
    private readonly issues: Issues,
    private readonly direct: DirectPostings,
    private readonly directHolds: DirectHolds,
  ) {}

  /**
   * Posts one transaction, all or nothing: free lines move stock in or out; issue lines consume holds
   * (a reservation's allocations), so a whole shipment or work-order completion is one transaction.
   * Ledger lines follow the posting's order; an issue line becomes one ledger line per allocation it
   * takes from. The caller's unit of work may go on after it (a document posts, then updates itself).
   */
  post(posting: Posting): Promise<TransactionView> {
    return this.atomic(() => this.write(posting));
  }

  /**
   * A stock adjustment as a request of its own (POST /v1/inventory/adjustments): one free line of new
   * work, and nothing after it in the unit of work. The ledger makes it as cheap as it can: one statement
   * when nothing stands in its way (DirectPostings), COMMIT sent with its last statement either way.
   */
  async adjust(adjustment: Adjustment): Promise<TransactionView> {
    const posting: Posting = {
      type: 'adjustment',
      reason: adjustment.reason,
      sourceType: 'adjustment',
      // New work: an inactive item, location or facility is refused.
      startsWork: true,
      lines: [
        {
          itemId: adjustment.itemId,
          locationId: adjustment.locationId,
          statusId: adjustment.statusId,
          qty: String(adjustment.qtyDelta),
          qtyField: 'qtyDelta',
          lotNo: adjustment.lotNo,
          expiryDate: adjustment.expiryDate,
          serialNos: adjustment.serialNos,
        },
      ],
    };
    const ending: Ending = { last: true };
    const direct = await this.direct.plan(posting, ending);
    if (direct) return this.atomic(() => this.direct.post(direct));
    return this.atomic(() => this.write(posting, undefined, ending));
  }

  /** `holds`: what the consumed reservations must allow (default: being issued from) and their If-Match. */
  private async write(posting: Posting, holds?: HoldCheck, ending: Ending = { last: false }): Promise<TransactionView> {
    if (!posting.lines.length) throw validationFailed('A posting needs at least one line', [{ field: 'lines', message: 'must not be empty' }]);
    const issueLines = posting.lines.filter(isIssue);
    const { concrete, plan } = issueLines.length ? await this.issues.plan(issueLines, holds) : { concrete: [], plan: undefined };
    let next = 0;
    const flat = posting.lines.flatMap((l) => (isIssue(l) ? concrete[next++] : [l as PostingLine]));
    const { resolved, known } = await this.lines.resolve(flat, !!posting.startsWork);
    // Reservations that expired stop holding stock before this posting takes stock out: their release
    // is applied with the posting's own counters, in one lock pass.
    const lapsed = await this.holds.lapsedAt(resolved.filter((l) => l.qty.lt(0)).map((l) => ({ itemId: l.item.id, facilityId: l.location.facilityId })));
    const freed = await this.holds.freeing(lapsed);
    const available = new Set([...resolved.filter((l) => l.status.isAvailable).map((l) => l.status.id), ...freed.balances.map((b) => b.statusId)]);
    // In the order they apply: what the expired holds free first, then the lines in their order (a line
    // takes out only what is there when it applies: Counters.check).
    const counters = await this.counters.check(
      [
        ...freed.balances,
        ...resolved.map((l) => ({
          itemId: l.item.id, facilityId: l.location.facilityId, locationId: l.location.id, lotId: l.lot?.id ?? null, statusId: l.status.id,
          onHand: l.qty, allocated: l.allocatedDelta, detail: (requested: Decimal, avail: Decimal) => lineDetail(l, requested, avail),
        })),
      ],
      (statusId) => available.has(statusId),
      freed.positions,
      known,
    );
    await this.holds.markFreed(lapsed, 'released');
    await this.holds.expired(lapsed);
    await this.serials.move(resolved);
    const journal = () => this.journal.write(posting, resolved, counters).catch((err: unknown) => {
      // Written without locks, refused by a counter's CHECK: a concurrent posting got there first.
      const constraint = constraintOf(err);
      if (counters?.optimistic && constraint && COUNTER_CONSTRAINTS.has(constraint)) throw new LostRace(`${constraint} on an optimistic posting`, { cause: err });
      throw err;
    });
    // The journal statement is the posting's last unless issue lines follow; when nothing follows the
    // posting either (adjust), COMMIT leaves with it (UnitOfWork.commitWith).
    const transaction = ending.last && !plan ? await this.uow.commitWith(journal) : await journal();
    if (plan) await this.issues.consume(plan);
    return transaction;
  }

  /**
   * Locks the balances of `keys` for the rest of the unit of work (creating missing ones at zero, so no
   * posting can slip in between) and returns their on-hand quantities by `balanceKey()`. For documents
   * that post "set to" quantities, such as count completion.
   */
  async lockBalances(keys: BalanceKey[]): Promise<Map<string, Decimal>> {
    const locked = await this.counters.lockBalances(keys);
    return new Map([...locked.entries()].map(([k, v]) => [k, v.onHand]));
  }

  /** Releases the expired holds of (item, facility) positions now, before a posting that sets quantities. */
  async releaseExpired(positions: Array<{ itemId: string; facilityId: string }>): Promise<void> {
    await this.holds.releaseLapsed(positions);
  }

  /**
   * A soft hold at (item, facility) as a request of its own (POST /v1/inventory/reservations: nothing
   * after it in the unit of work, so COMMIT leaves with its statement) — new work: refused for inactive
   * items and facilities, and beyond available-to-promise. Documents reserve with `reserveAll`.
   */
  async reserve(hold: Hold): Promise<ReservationView> {
    const ending: Ending = { last: true };
    // One statement, batched with the tenant's other new reservations, when nothing stands in its way (DirectHolds).
    const direct = await this.directHolds.plan(hold, ending);
    if (direct) return reservationView(await this.atomic(() => this.directHolds.reserve(direct)), []);
    const { id, row } = await this.atomic(() => this.holds.reserve(hold, ending));
    // A new reservation has no allocations: its row is its view (unless it lapsed at once).
    return row ? reservationView(row, []) : this.reservation(id);
  }

  /**
   * Several soft holds, all or nothing: a shortage of any is one 409 insufficient_stock naming every short
   * hold (`field` of each hold), and then nothing is reserved. Returns the reservation ids in order.
   */
  reserveAll(holds: Hold[]): Promise<string[]> {
    return this.atomic(() => this.holds.reserveAll(holds));
  }

  /** Changes an open reservation: quantity (re-checked against ATP), expiry, notes. */
  async updateReservation(id: string, change: { qty?: Decimal.Value; expiresAt?: Date | null; notes?: string | null }, ifMatch?: number): Promise<ReservationView> {
    await this.atomic(() => this.holds.update(id, change, ifMatch));
    return this.reservation(id);
  }

  /** Pins an open reservation's unallocated quantity to balances: the given pins, or automatically (FEFO). */
  async allocate(id: string, pins?: Pin[], ifMatch?: number): Promise<ReservationView> {
    await this.atomic(() => this.allocations.allocateAll([{ reservationId: id, pins }], { ifMatch }));
    return this.reservation(id);
  }

  /**
   * A document's allocations in one pass (a shipment, a work order's completion): each request allocates
   * its pins or, without, the reservation's whole unallocated rest. `also`: the document's other holds
   * it is about to issue from, so that all its stock rows are locked in the one lock order (no deadlock
   * between documents listing the same items in different line orders).
   */
  allocateAll(requests: AllocationRequest[], also: string[] = []): Promise<void> {
    return this.atomic(() => this.allocations.allocateAll(requests, { also }));
  }

  /** Reservations locked for the rest of the unit of work (id order), as they stand now, with their active allocations. */
  async lockedReservations(ids: string[]): Promise<ReservationView[]> {
    if (!ids.length) return [];
    const rows = await this.holds.lock(ids);
    const allocations = await liveAllocations(this.uow.manager, this.uow.tenantId, ids);
    return rows.map((r) => reservationView(r, allocations.filter((a) => a.reservation_id === r.id)));
  }

  /** Releases (or cancels) an open or allocated reservation: everything it holds is freed. */
  async release(id: string, outcome: 'released' | 'cancelled', ifMatch?: number): Promise<ReservationView> {
    await this.atomic(() => this.holds.release(id, outcome, ifMatch));
    return this.reservation(id);
  }

  /** Closes a reservation as fulfilled for what it issued, freeing the rest (a short shipment or completion). */
  async closeReservation(id: string): Promise<ReservationView> {
    await this.atomic(() => this.holds.close([id]));
    return this.reservation(id);
  }

  /** `closeReservation` for several reservations of one document, in one lock pass. */
  closeReservations(ids: string[]): Promise<void> {
    return this.atomic(() => this.holds.close(ids));
  }

  /** `release` for several reservations of one document (those still holding), in one lock pass. */
  releaseAll(ids: string[], outcome: 'released' | 'cancelled'): Promise<void> {
    return this.atomic(() => this.holds.releaseAll(ids, outcome));
  }

  /** Issues all of an allocated reservation's stock (ledger `fulfillment`) and so fulfills it. */
  async fulfill(id: string, ifMatch?: number): Promise<ReservationView> {
    const posting: Posting = { type: 'fulfillment', sourceType: 'reservation', sourceId: id, lines: [{ reservationId: id } satisfies IssueLine] };
    await this.atomic(() => this.write(posting, { action: 'fulfill', ifMatch }));
    return this.reservation(id);
  }

  /**
   * Runs a ledger step; if it fails, the unit of work is marked failed, so it rolls back even when the
   * caller catches the error: a step's partial writes are never committed (all or nothing).
   */
  private async atomic<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (err) {
      this.uow.fail(err);
      throw err;
    }
  }

  /** One reservation as it stands now (an expired one reads as released) with its active allocations. */
  async reservation(id: string): Promise<ReservationView> {
    const r = await reservationNow(this.uow.manager, this.uow.tenantId, id);
    if (!r) throw notFound('Reservation');
    return reservationView(r, await liveAllocations(this.uow.manager, this.uow.tenantId, [id]));
  }

  /** Every expired reservation of the current tenant is released (the expiry job); returns how many. */
  sweepExpired(): Promise<number> {
    return this.holds.sweep();
  }
}
