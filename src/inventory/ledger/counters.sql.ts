import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { GENERIC, query, raw, Sql, sql } from '../../database/sql';
import { LostRace, UnitOfWork } from '../../database/unit-of-work';
import { qty as toQty, sql as decimalText } from '../../documents/quantity';
import type { SqlRider } from '../../documents/references.sql';
import {
  BALANCE_ORDER, BalanceDelta, BalanceKey, balanceKey, balanceShortage, changesRow, mergeBalances, mergePositions, PositionDelta, positionKey, PositionRow, positionShortage, shortage, sortBy,
} from './counter-changes';

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
 * in one statement per table, in the lock order (counter-changes.ts); the change is checked against the locked values
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

  /** Whether counters read without a lock may be written optimistically in this attempt (`check`). */
  get optimistic(): boolean {
    return this.uow.optimistic;
  }

  /**
   * Applies balance deltas and the position deltas they imply (Available statuses) plus `extra` ones:
   * both tables' rows locked first (balances, then positions, each in lock order), every change
   * checked against the locked values, and only then written — a shortage anywhere writes nothing.
   */
  async apply(deltas: BalanceDelta[], available: (statusId: string) => boolean, extra: PositionDelta[] = []): Promise<void> {
    const write = await this.check(deltas, available, extra);
    if (write) await this.write(write);
  }

  /** Writes a checked change on its own (when no statement of the caller's can carry it). */
  async write(write: CounterWrite): Promise<void> {
    await query(this.m, sql`WITH ${write.ctes} SELECT 1`, GENERIC);
  }

  /**
   * Locks and checks like `apply`, but leaves the write to the caller: the returned CTEs (`counter_b`,
   * `counter_p`) go into the caller's next statement, so a posting writes its counters and its journal
   * in one statement. Undefined when nothing changes.
   *
   * `known`: counter rows the caller's look-up statement already read (`prelock`). Locked ones need no
   * statement here. Read without a lock (an optimistic posting): when the change is one balance and its
   * position, both read, it is checked against what was read and written unlocked — the write's
   * statement locks them only for its own run and the COMMIT, and the CHECK constraints refuse a change
   * that a concurrent one has made short (the caller turns that into a LostRace: `CounterWrite.optimistic`);
   * a shortage in what was read is a LostRace at once. Either way the unit of work runs again, locking
   * first. Any other change locks its rows here as usual.
   */
  async check(deltas: BalanceDelta[], available: (statusId: string) => boolean, extra: PositionDelta[] = [], known?: CounterRows): Promise<CounterWrite | undefined> {
    // Every key a delta touches is locked and checked; only those whose sum is not zero are written.
    const balances = mergeBalances(deltas);
    const changed = balances.filter(changesRow);
    const positions = mergePositions([
      ...changed
        .filter((d) => available(d.statusId))
        .map((d): PositionDelta => ({ itemId: d.itemId, facilityId: d.facilityId, onHand: d.onHand, allocated: d.allocated, detail: d.detail })),
      ...extra,
    ]);
    if (!balances.length && !positions.length) return undefined;
    const optimistic = !!known && !known.locked && balances.length === 1 && positions.length <= 1 && covers(known, balances, positions);
    const { balances: lockedBalances, positions: lockedPositions } = optimistic ? known : await this.lock(balances, positions, known?.locked ? known : undefined);
    // A key short at its balance is reported there; the facility's position is reported only when every balance suffices.
    const short = balances.flatMap((d) => balanceShortage(d, lockedBalances.get(balanceKey(d))!));
    if (!short.length) short.push(...positions.flatMap((p) => positionShortage(p, lockedPositions.get(positionKey(p))!)));
    // Read without a lock, a shortage may be a change in flight (a release not yet committed): the exact
    // answer comes from running again with the rows locked, which waits for it.
    if (short.length) throw optimistic ? new LostRace('a shortage in counter rows read without a lock') : shortage(short);
    // Lines that cancel out everywhere: checked, with their rows locked to the end of the unit of work, and nothing to write.
    if (!changed.length && !positions.length) return undefined;
    return {
      optimistic,
      ctes: applySql(
        this.uow.tenantId,
        [changed.map((d) => lockedBalances.get(balanceKey(d))!.id), changed.map((d) => decimalText(d.onHand)), changed.map((d) => decimalText(d.allocated))],
        [positions.map((p) => p.itemId), positions.map((p) => p.facilityId), positions.map((p) => decimalText(p.onHand)), positions.map((p) => decimalText(p.allocated)), positions.map((p) => decimalText(p.reserved))],
      ),
    };
  }

  /**
   * Locks balances and positions in one statement: balances first, then positions, each in lock order
   * (the UNION ALL reads the balances' CTE to its end before the positions' one). Existing rows are locked
   * with `FOR UPDATE` (a lock, not a new row version); only when a key has no row yet does a second
   * statement create the missing ones at zero and lock every key (`INSERT … ON CONFLICT DO UPDATE`).
   * That second pass can wait for a key created meanwhile by another unit of work while holding later
   * keys: a deadlock is possible there (only for new keys); PostgreSQL detects it and the unit of work
   * is retried.
   */
  private async lock(balances: BalanceKey[], positions: Array<{ itemId: string; facilityId: string }>, prelocked?: CounterRows): Promise<CounterRows> {
    // Every row already locked by the posting's look-up statement (`prelock`): nothing to send.
    if (prelocked && covers(prelocked, balances, positions)) return prelocked;
    type Row = BalanceRow & { kind: 'b' | 'p'; facility_id: string; qty_reserved: string };
    const tenant = this.uow.tenantId;
    const keys = balanceArrays(balances);
    const positionKeys = [positions.map((p) => p.itemId), positions.map((p) => p.facilityId)] as const;
    const both = (b: Sql, p: Sql) => sql`WITH b AS (${b}), p AS (${p})
       SELECT 'b' AS kind, id, item_id, NULL::uuid AS facility_id, location_id, lot_id, status_id, qty_on_hand, qty_allocated, NULL::numeric AS qty_reserved FROM b
       UNION ALL
       SELECT 'p', NULL, item_id, facility_id, NULL, NULL, NULL, qty_available_on_hand, qty_allocated, qty_reserved FROM p`;
    // After a look-up statement that locked what exists (prelock), a key still missing has no row: create it.
    let rows: Row[] = prelocked ? [] : await query(this.m, both(selectBalances(tenant, keys), selectPositions(tenant, ...positionKeys)), GENERIC);
    if (rows.length < balances.length + positions.length) rows = await query(this.m, both(lockBalancesSql(tenant, keys), lockPositionsSql(tenant, ...positionKeys)), GENERIC);
    return counterRows(rows.filter((r) => r.kind === 'b'), rows.filter((r) => r.kind === 'p'), true);
  }

  /**
   * For a posting's look-up statement (CatalogRefs.forPosting): reads the existing balance and position
   * rows of the lines' keys as they will most likely be — the location's facility, the line's lot or
   * none, its status or the tenant's AVAILABLE one —, locked in lock order unless `lock` is false (an
   * optimistic posting, see `check`), so that `check` usually needs no statement of its own (an
   * adjustment is then one statement shorter). A line whose key turns out otherwise, or a key without a
   * row yet, is locked by `check` as before.
   */
  prelock(keys: Array<{ itemId: string; locationId: string; lotId: string | null; statusId: string | null }>, lock = true): SqlRider<CounterRows> {
    const tenant = this.uow.tenantId;
    const forUpdate = (table: string) => raw(lock ? `FOR UPDATE OF ${table}` : '');
    const [itemIds, locationIds, lotIds, statusIds] = (['itemId', 'locationId', 'lotId', 'statusId'] as const).map((f) => keys.map((k) => k[f]));
    return {
      ctes: sql`pre_k AS (
           SELECT DISTINCT k.item_id, loc.facility_id, k.location_id, k.lot_id, ${raw(LOT_KEY('k.lot_id'))} AS lot_key, coalesce(k.status_id, st.id) AS status_id
             FROM unnest(${itemIds}::uuid[], ${locationIds}::uuid[], ${lotIds}::uuid[], ${statusIds}::uuid[]) AS k(item_id, location_id, lot_id, status_id)
             JOIN locations loc ON loc.tenant_id = ${tenant} AND loc.id = k.location_id
             LEFT JOIN stock_statuses st ON st.tenant_id = ${tenant} AND st.code = 'AVAILABLE'),
         pre_b AS (
           SELECT b.id, b.item_id, b.location_id, b.lot_id, b.status_id, b.qty_on_hand, b.qty_allocated
             FROM pre_k k JOIN balances b ON b.tenant_id = ${tenant} AND b.item_id = k.item_id AND b.location_id = k.location_id
                                         AND b.lot_key = k.lot_key AND b.status_id = k.status_id
            ORDER BY ${raw(BALANCE_ORDER)}
              ${forUpdate('b')}),
         pre_p AS (
           SELECT p.item_id, p.facility_id, p.qty_available_on_hand AS qty_on_hand, p.qty_allocated, p.qty_reserved
             FROM (SELECT DISTINCT k.item_id, k.facility_id FROM pre_k k
                     JOIN stock_statuses s ON s.tenant_id = ${tenant} AND s.id = k.status_id AND s.is_available) k
             JOIN inventory_positions p ON p.tenant_id = ${tenant} AND p.item_id = k.item_id AND p.facility_id = k.facility_id
            ORDER BY p.item_id, p.facility_id
              ${forUpdate('p')})`,
      // balances before positions: the lock order (the output columns are evaluated in this order)
      // quantities as text: a JSON number would round them
      columns: sql`(SELECT coalesce(json_agg(json_build_object('id', b.id, 'item_id', b.item_id, 'location_id', b.location_id, 'lot_id', b.lot_id,
                     'status_id', b.status_id, 'qty_on_hand', b.qty_on_hand::text, 'qty_allocated', b.qty_allocated::text)), '[]') FROM pre_b b) AS pre_balances,
                  (SELECT coalesce(json_agg(${raw(POSITION_JSON)}), '[]') FROM pre_p p) AS pre_positions`,
      read: (row) => counterRows(row.pre_balances as BalanceRow[], row.pre_positions as Array<PositionKeyRow>, lock),
    };
  }

  /** `prelock` for position keys alone (a hold's look-up statement). */
  prelockPositions(keys: Array<{ itemId: string; facilityId: string }>): SqlRider<CounterRows> {
    return {
      ctes: sql`pre_p AS (
           SELECT p.item_id, p.facility_id, p.qty_available_on_hand AS qty_on_hand, p.qty_allocated, p.qty_reserved
             FROM unnest(${keys.map((k) => k.itemId)}::uuid[], ${keys.map((k) => k.facilityId)}::uuid[]) AS k(item_id, facility_id)
             JOIN inventory_positions p ON p.tenant_id = ${this.uow.tenantId} AND p.item_id = k.item_id AND p.facility_id = k.facility_id
            ORDER BY p.item_id, p.facility_id
              FOR UPDATE OF p)`,
      columns: sql`(SELECT coalesce(json_agg(${raw(POSITION_JSON)}), '[]') FROM pre_p p) AS pre_positions`,
      read: (row) => counterRows([], row.pre_positions as Array<PositionKeyRow>, true),
    };
  }

  /** Creates (at zero) and locks the balances of `keys` in lock order; returns them by balanceKey. */
  async lockBalances(keys: BalanceKey[]): Promise<Map<string, { id: string; onHand: Decimal; allocated: Decimal }>> {
    const sorted = sortBy(keys, balanceKey);
    if (!sorted.length) return new Map();
    const rows: BalanceRow[] = await query(this.m, lockBalancesSql(this.uow.tenantId, balanceArrays(sorted)), GENERIC);
    return new Map(rows.map((r) => [
      balanceKey({ itemId: r.item_id, locationId: r.location_id, lotId: r.lot_id, statusId: r.status_id }),
      { id: r.id, onHand: toQty(r.qty_on_hand), allocated: toQty(r.qty_allocated) },
    ]));
  }
}

/** A locked position row `p` as JSON, quantities as text (a JSON number would round them). */
const POSITION_JSON = `json_build_object('item_id', p.item_id, 'facility_id', p.facility_id, 'qty_on_hand', p.qty_on_hand::text,
  'qty_allocated', p.qty_allocated::text, 'qty_reserved', p.qty_reserved::text)`;

/** Counter rows this unit of work read, by balanceKey / positionKey: `locked` for the rest of it, or read without a lock. */
export interface CounterRows {
  balances: Map<string, { id: string; onHand: Decimal; allocated: Decimal }>;
  positions: Map<string, PositionRow>;
  locked: boolean;
}

/** Whether `rows` holds every key of the change. */
const covers = (rows: CounterRows, balances: BalanceKey[], positions: Array<{ itemId: string; facilityId: string }>) =>
  balances.every((b) => rows.balances.has(balanceKey(b))) && positions.every((p) => rows.positions.has(positionKey(p)));

interface PositionKeyRow {
  item_id: string;
  facility_id: string;
  qty_on_hand: string;
  qty_allocated: string;
  qty_reserved: string;
}

function counterRows(balances: BalanceRow[], positions: PositionKeyRow[], locked: boolean): CounterRows {
  return {
    locked,
    balances: new Map(balances.map((r) => [
      balanceKey({ itemId: r.item_id, locationId: r.location_id, lotId: r.lot_id, statusId: r.status_id }),
      { id: r.id, onHand: toQty(r.qty_on_hand), allocated: toQty(r.qty_allocated) },
    ])),
    positions: new Map(positions.map((r) => [
      positionKey({ itemId: r.item_id, facilityId: r.facility_id }),
      { onHand: toQty(r.qty_on_hand), allocated: toQty(r.qty_allocated), reserved: toQty(r.qty_reserved) },
    ])),
  };
}

/**
 * The counter writes of a checked change: CTEs (an `sql` fragment, its parameters numbered where it
 * lands) for the caller's statement. `counter_b` (balances) runs before `counter_p` (positions), which
 * reads it; a CTE of the statement that must lock after them (a document number) waits for `counter_p`
 * (`nextNumberSql(tenantId, prefix, AFTER_COUNTERS)`): the lock order holds within the statement too.
 * `counter_b` returns each balance's key and its quantities after the change (the posting's events read them).
 * `optimistic`: the rows were not locked before this statement (see `Counters.check`); a CHECK
 * violation of a counter constraint then means a concurrent change, not a checked shortage.
 */
export interface CounterWrite {
  ctes: Sql;
  optimistic: boolean;
}

/** A condition that holds once a CounterWrite's CTEs have run (for `nextNumberSql`). */
export const AFTER_COUNTERS = '(SELECT count(*) FROM counter_p) >= 0';

/** The constraints that keep counters whole: a violation by an optimistic write is a lost race. */
export const COUNTER_CONSTRAINTS = new Set(['balance_not_negative', 'balance_allocated_within_on_hand', 'position_counters_not_negative', 'position_not_overcommitted']);

/** The `lot_key` of stock without a lot (balances.lot_key: the lot, or this all-zero UUID). */
export const NO_LOT = '00000000-0000-0000-0000-000000000000';
/**
 * A balance's `lot_key` for a lot id that may be null (stock without a lot), as an output column of the
 * key set a look-up joins: balances are then looked up by five plain equalities (`b.lot_key = k.lot_key`),
 * which every index of balances holds in full (migration BalanceKeyIndexes), so every plan — a generic
 * one without statistics too — probes the whole key. (Written on the balance's side of the join,
 * `b.lot_key = coalesce(k.lot_id, …)` stays out of the Index Cond: a filter after the probe.)
 */
export const LOT_KEY = (lotId: string) => `coalesce(${lotId}, '${NO_LOT}'::uuid)`;

/** A balance key's arrays, in the given order: item, facility, location, lot, status. */
type BalanceArrays = ReturnType<typeof balanceArrays>;
const balanceArrays = (keys: BalanceKey[]) =>
  [keys.map((k) => k.itemId), keys.map((k) => k.facilityId), keys.map((k) => k.locationId), keys.map((k) => k.lotId), keys.map((k) => k.statusId)] as const;

/** Existing balances of the keys (in the given order) locked in that order; each key's lot_key given (LOT_KEY). */
const selectBalances = (tenantId: string, [itemIds, , locationIds, lotIds, statusIds]: BalanceArrays) => sql`SELECT b.id, b.item_id, b.location_id, b.lot_id, b.status_id, b.qty_on_hand, b.qty_allocated
         FROM unnest(${itemIds}::uuid[], ${locationIds}::uuid[], ${lotIds.map((l) => l ?? NO_LOT)}::uuid[], ${statusIds}::uuid[])
              WITH ORDINALITY AS k(item_id, location_id, lot_key, status_id, ord)
         JOIN balances b ON b.tenant_id = ${tenantId} AND b.item_id = k.item_id AND b.location_id = k.location_id
                        AND b.lot_key = k.lot_key AND b.status_id = k.status_id
        ORDER BY k.ord
          FOR UPDATE OF b`;

/** Existing positions of the keys (in lock order) locked in that order. */
const selectPositions = (tenantId: string, itemIds: string[], facilityIds: string[]) => sql`SELECT p.item_id, p.facility_id, p.qty_available_on_hand, p.qty_allocated, p.qty_reserved
         FROM unnest(${itemIds}::uuid[], ${facilityIds}::uuid[]) WITH ORDINALITY AS k(item_id, facility_id, ord)
         JOIN inventory_positions p ON p.tenant_id = ${tenantId} AND p.item_id = k.item_id AND p.facility_id = k.facility_id
        ORDER BY k.ord
          FOR UPDATE OF p`;

/**
 * Balance keys (in the given order) created at zero when missing and locked: DO UPDATE (not DO NOTHING)
 * locks an existing row and returns it, using the unique key's index.
 */
const lockBalancesSql = (tenantId: string, [itemIds, facilityIds, locationIds, lotIds, statusIds]: BalanceArrays) => sql`INSERT INTO balances AS b (tenant_id, item_id, facility_id, location_id, lot_id, status_id)
       SELECT ${tenantId}, k.item_id, k.facility_id, k.location_id, k.lot_id, k.status_id
         FROM unnest(${itemIds}::uuid[], ${facilityIds}::uuid[], ${locationIds}::uuid[], ${lotIds}::uuid[], ${statusIds}::uuid[])
              WITH ORDINALITY AS k(item_id, facility_id, location_id, lot_id, status_id, ord)
        ORDER BY k.ord
       ON CONFLICT ON CONSTRAINT balances_key DO UPDATE SET updated_at = b.updated_at
       RETURNING b.id, b.item_id, b.location_id, b.lot_id, b.status_id, b.qty_on_hand, b.qty_allocated`;

/** Position keys (in lock order) created at zero when missing and locked. */
const lockPositionsSql = (tenantId: string, itemIds: string[], facilityIds: string[]) => sql`INSERT INTO inventory_positions AS p (tenant_id, item_id, facility_id)
       SELECT ${tenantId}, k.item_id, k.facility_id FROM unnest(${itemIds}::uuid[], ${facilityIds}::uuid[]) WITH ORDINALITY AS k(item_id, facility_id, ord)
        ORDER BY k.ord
       ON CONFLICT (tenant_id, item_id, facility_id) DO UPDATE SET updated_at = p.updated_at
       RETURNING p.item_id, p.facility_id, p.qty_available_on_hand, p.qty_allocated, p.qty_reserved`;

/**
 * CTEs that apply checked deltas to locked balances (by id: ids, on-hand and allocated deltas) and
 * positions (by key: items, facilities, on-hand, allocated and reserved deltas).
 */
function applySql(
  tenantId: string,
  [balanceIds, balanceOnHand, balanceAllocated]: [string[], string[], string[]],
  [itemIds, facilityIds, onHand, allocated, reserved]: [string[], string[], string[], string[], string[]],
): Sql {
  return sql`counter_b AS (
    UPDATE balances b SET qty_on_hand = b.qty_on_hand + k.on_hand, qty_allocated = b.qty_allocated + k.allocated, updated_at = now()
      FROM unnest(${balanceIds}::uuid[], ${balanceOnHand}::numeric[], ${balanceAllocated}::numeric[]) AS k(id, on_hand, allocated)
     WHERE b.tenant_id = ${tenantId} AND b.id = k.id
    RETURNING b.item_id, b.location_id, b.lot_id, b.lot_key, b.status_id, b.qty_on_hand, b.qty_allocated),
  counter_p AS (
    UPDATE inventory_positions p
       SET qty_available_on_hand = p.qty_available_on_hand + k.on_hand, qty_allocated = p.qty_allocated + k.allocated,
           qty_reserved = p.qty_reserved + k.reserved, updated_at = now()
      FROM unnest(${itemIds}::uuid[], ${facilityIds}::uuid[], ${onHand}::numeric[], ${allocated}::numeric[], ${reserved}::numeric[]) AS k(item_id, facility_id, on_hand, allocated, reserved)
     WHERE p.tenant_id = ${tenantId} AND p.item_id = k.item_id AND p.facility_id = k.facility_id
       -- balances first: no position row is updated (locked) before counter_b has run to its end
       AND (SELECT count(*) FROM counter_b) >= 0
    RETURNING 1)`;
}
