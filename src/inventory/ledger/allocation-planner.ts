import Decimal from 'decimal.js';
import { qty as toQty } from '../../documents/quantity';

/**
 * Pure planning of what a hold takes: which balances an automatic allocation pins, and which
 * allocations an issue consumes. No I/O: the callers read (and lock) the candidates, then write the plan.
 */

/** Free stock of a balance that an allocation may pin. */
export interface FreeStock {
  balanceId: string;
  locationId: string;
  locationCode: string;
  lotId: string | null;
  /** Expiry of the lot as YYYY-MM-DD (null: no lot or no expiry). */
  expiryDate: string | null;
  /** When the lot was created (older lots go first among equal expiries). */
  lotCreatedAt: Date | null;
  free: Decimal.Value;
}

export interface Take<T> {
  from: T;
  qty: Decimal;
}

export interface Plan<T> {
  takes: Array<Take<T>>;
  /** What could not be covered (0 when the plan is complete). */
  shortfall: Decimal;
}

const time = (d: Date | null) => (d ? d.getTime() : Number.POSITIVE_INFINITY);

/**
 * Earliest expiry first (no expiry last), then the oldest lot, then location code, then balance id. The
 * statement that locks a document's stock (Allocations.lockStock) cuts its rows in this same order: change
 * both together.
 */
export function fefoOrder(a: FreeStock, b: FreeStock): number {
  if (a.expiryDate !== b.expiryDate) {
    if (a.expiryDate === null) return 1;
    if (b.expiryDate === null) return -1;
    return a.expiryDate < b.expiryDate ? -1 : 1;
  }
  const [ta, tb] = [time(a.lotCreatedAt), time(b.lotCreatedAt)];
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (a.locationCode !== b.locationCode) return a.locationCode < b.locationCode ? -1 : 1;
  return a.balanceId < b.balanceId ? -1 : a.balanceId > b.balanceId ? 1 : 0;
}

/** Takes `wanted` from `sources` in the given order, each up to `available(source)`. */
export function takeInOrder<T>(sources: T[], wanted: Decimal.Value, available: (s: T) => Decimal.Value): Plan<T> {
  let left = toQty(wanted);
  const takes: Array<Take<T>> = [];
  for (const from of sources) {
    if (!left.gt(0)) break;
    const qty = Decimal.min(left, available(from));
    if (!qty.gt(0)) continue;
    takes.push({ from, qty });
    left = left.minus(qty);
  }
  return { takes, shortfall: Decimal.max(left, 0) };
}

/** Automatic allocation: free stock taken earliest expiry first, then oldest lot, then location code. */
export function planAllocation(candidates: FreeStock[], wanted: Decimal.Value): Plan<FreeStock> {
  return takeInOrder([...candidates].sort(fefoOrder), wanted, (c) => c.free);
}

/** An active allocation a hold may issue from. */
export interface HeldStock {
  allocationId: string;
  balanceId: string;
  locationId: string;
  locationCode: string;
  lotId: string | null;
  expiryDate: string | null;
  statusId: string;
  qty: Decimal.Value;
}

/**
 * Issuing from a reservation's allocations: only those at `locationId` / `lotId` when given, earliest
 * expiry first, then location code; `wanted` defaults to everything that matches.
 */
export function planIssue(allocations: HeldStock[], wanted?: Decimal.Value, where: { locationId?: string | null; lotId?: string | null } = {}): Plan<HeldStock> {
  const matching = allocations
    .filter((a) => (!where.locationId || a.locationId === where.locationId) && (!where.lotId || a.lotId === where.lotId))
    .sort((a, b) =>
      fefoOrder(
        { ...a, lotCreatedAt: null, free: a.qty },
        { ...b, lotCreatedAt: null, free: b.qty },
      ),
    );
  const all = matching.reduce((s, a) => s.plus(a.qty), toQty(0));
  return takeInOrder(matching, wanted ?? all, (a) => a.qty);
}
