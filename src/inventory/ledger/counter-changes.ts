import Decimal from 'decimal.js';
import { ErrorDetail, insufficientStock } from '../../common/errors';
import { Qty } from '../../documents/quantity';

/*
 * Changes of counters and how they are judged, apart from the rows they apply to (counters.ts): the
 * keys and THE lock order, deltas merged per key, and the shortage a change would cause.
 */

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

/** A position's counters as read. */
export interface PositionRow {
  onHand: Decimal;
  allocated: Decimal;
  reserved: Decimal;
}

export type MergedPosition = Required<Omit<PositionDelta, 'detail'>> & Pick<PositionDelta, 'detail'>;

export const sortBy = <T>(xs: T[], key: (x: T) => string): T[] =>
  [...new Map(xs.map((x) => [key(x), x])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, x]) => x);

/**
 * Whom a shortage of a key merged from several deltas names: the first delta of the key that takes stock
 * out (a move's −line, rather than the +line of another request line that brought stock in), else the
 * first with a detail. `takers`: the keys whose detail is already a taker's.
 */
function mergedDetail<D extends { onHand?: Decimal; detail?: BalanceDelta['detail'] }>(sofar: D['detail'], d: D, key: string, takers: Set<string>): D['detail'] {
  if (takers.has(key) || !d.onHand?.lt(0) || !d.detail) return sofar ?? d.detail;
  takers.add(key);
  return d.detail;
}

/** A balance's deltas summed per key, with the deltas themselves in the order given: the order they apply in. */
export interface MergedBalance extends BalanceDelta {
  steps: BalanceDelta[];
}

/** Whether a delta (or a key's sum of them) changes its row. */
export const changesRow = (d: { onHand: Decimal; allocated: Decimal }) => !d.onHand.isZero() || !d.allocated.isZero();

/**
 * Balance deltas summed per key, in lock order, without the keys no delta changes. A key whose deltas
 * cancel out (a move's line into a bin and a later one out of it) stays: its row is left as it is, but
 * each of its steps must hold on the way (balanceShortage), checked against the row locked like any other.
 */
export function mergeBalances(deltas: BalanceDelta[]): MergedBalance[] {
  const merged = new Map<string, MergedBalance>();
  const takers = new Set<string>();
  for (const d of deltas) {
    const key = balanceKey(d);
    const e = merged.get(key);
    const detail = mergedDetail(e?.detail, d, key, takers);
    if (e) e.steps.push(d);
    merged.set(key, e ? { ...e, onHand: e.onHand.plus(d.onHand), allocated: e.allocated.plus(d.allocated), detail } : { ...d, steps: [d] });
  }
  return sortBy([...merged.values()], balanceKey).filter((d) => d.steps.some(changesRow));
}

/** Position deltas summed per key, in lock order, without the ones that change nothing. */
export function mergePositions(deltas: PositionDelta[]): MergedPosition[] {
  const merged = new Map<string, MergedPosition>();
  const takers = new Set<string>();
  for (const d of deltas) {
    const key = positionKey(d);
    const e = merged.get(key) ?? { itemId: d.itemId, facilityId: d.facilityId, onHand: zero, allocated: zero, reserved: zero, detail: undefined };
    merged.set(key, {
      ...e,
      onHand: e.onHand.plus(d.onHand ?? zero),
      allocated: e.allocated.plus(d.allocated ?? zero),
      reserved: e.reserved.plus(d.reserved ?? zero),
      detail: mergedDetail(e.detail, d, key, takers),
    });
  }
  return sortBy([...merged.values()], positionKey).filter((p) => !p.onHand.isZero() || !p.allocated.isZero() || !p.reserved.isZero());
}

/**
 * The shortage a balance change would cause, or none: first of its sum (what the CHECKs would refuse),
 * then of its steps one after another. A step — a posting's line — may take out only what the row has
 * unallocated when it applies: what was there before the posting, or what an earlier line brought in,
 * never what a later line brings (lines that cancel out otherwise move stock that is not there, or
 * allocated stock, while the sum changes nothing the CHECKs could see).
 */
export function balanceShortage(d: MergedBalance, row: { onHand: Decimal; allocated: Decimal }): ErrorDetail[] {
  const short = deltaShortage(d, row);
  if (short.length || d.steps.length === 1) return short;
  let at = row;
  for (const step of d.steps) {
    const stepShort = deltaShortage(step, at);
    if (stepShort.length) return stepShort;
    at = { onHand: at.onHand.plus(step.onHand), allocated: at.allocated.plus(step.allocated) };
  }
  return [];
}

/** The shortage one change of a balance would cause against its row as it stands. */
function deltaShortage(d: BalanceDelta, row: { onHand: Decimal; allocated: Decimal }): ErrorDetail[] {
  const onHand = row.onHand.plus(d.onHand);
  const allocated = row.allocated.plus(d.allocated);
  if (!onHand.lt(0) && !allocated.lt(0) && !allocated.gt(onHand)) return [];
  // Taking stock out may use the line's own allocation as well as the free quantity; allocating asks
  // for free quantity only.
  const free = row.onHand.minus(row.allocated);
  const out = d.onHand.lt(0);
  const requested = out ? d.onHand.abs() : d.allocated.abs();
  const available = Decimal.max(out ? free.plus(Decimal.max(d.allocated.negated(), 0)) : free, 0);
  return [describe(d, requested, available)];
}

/** The shortage a position change would cause: allocated + reserved may never exceed available on hand. */
export function positionShortage(p: MergedPosition, row: PositionRow): ErrorDetail[] {
  const onHand = row.onHand.plus(p.onHand);
  const allocated = row.allocated.plus(p.allocated);
  const reserved = row.reserved.plus(p.reserved);
  if (!onHand.lt(0) && !allocated.lt(0) && !reserved.lt(0) && !allocated.plus(reserved).gt(onHand)) return [];
  const atp = row.onHand.minus(row.allocated).minus(row.reserved);
  // What the change asks of available-to-promise: stock taken out (less what it issues from its own
  // allocations) or newly reserved.
  const out = p.onHand.lt(0);
  const requested = out ? p.onHand.abs() : p.reserved;
  const available = Decimal.max(out ? atp.plus(p.allocated.abs()) : atp, 0);
  const detail = p.detail?.(requested, available) ?? { itemId: p.itemId, facilityId: p.facilityId, requested: requested.toNumber(), available: available.toNumber() };
  return [{
    ...detail,
    message: out
      ? 'would leave the facility with less available stock than it has allocated and reserved; release holds first'
      : 'exceeds the available-to-promise quantity',
  }];
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
