import { Injectable, Logger } from '@nestjs/common';
import Decimal from 'decimal.js';
import type { EntityManager } from 'typeorm';
import { randomUUID } from 'node:crypto';
import { DocumentNumbers } from '../../common/doc-numbers';
import {
  AppError,
  ErrorDetail,
  insufficientStock,
  invalidField,
  invalidState,
  notFound,
  unknownReference,
  validationFailed,
} from '../../common/errors';
import { UnitOfWork } from '../../database/unit-of-work';
import { Hold, Pin, Posting, PostingLine } from './posting';
import { qty as toQty, Qty, sql, sum } from './quantity';
import { at, ItemRef, LedgerReferences, LocationRef, StatusRef, unique } from './references';
import {
  AllocationRow,
  LineRow,
  ReservationRow,
  reservationView,
  ReservationView,
  TransactionRow,
  transactionView,
  TransactionView,
} from './views';

/** A posting line after validation: every reference resolved, quantities exact. */
interface ResolvedLine {
  line: PostingLine;
  item: ItemRef;
  location: LocationRef;
  status: StatusRef;
  lotId: string | null;
  qty: Decimal;
  allocatedDelta: Decimal;
  serialNos: string[];
}

interface Counter {
  itemId: string;
  facilityId: string;
  locationId: string;
  lotId: string | null;
  statusId: string;
  onHand: Decimal;
  allocated: Decimal;
  /** First line (index) touching this key, for error details. */
  line: number;
}

const ACTIVE = ['open', 'allocated'];

/**
 * The only writer of ledger transactions and lines, balances, positions, lots, serials, reservations
 * and allocations. Runs inside the caller's unit of work and never opens a transaction of its own.
 *
 * Every quantity change is an atomic `x = x + delta` in SQL; the database's CHECK constraints refuse
 * anything that would oversell (balance below zero or below its allocations; a facility's available
 * on-hand below its allocations plus open reservations). Rows are touched in a fixed order —
 * reservations, then balances (sorted by key), then positions (sorted by key), then document
 * counters — so concurrent units of work queue instead of deadlocking.
 */
@Injectable()
export class LedgerService {
  private readonly logger = new Logger(LedgerService.name);
  /** Units of work (by their manager) whose expired reservations have been swept. */
  private readonly swept = new WeakSet<EntityManager>();

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: LedgerReferences,
    private readonly numbers: DocumentNumbers,
  ) {}

  private get m() {
    return this.uow.manager;
  }

  private get tenant() {
    return this.uow.tenantId;
  }

  // ---------------------------------------------------------------------------------------------
  // Postings

  /** Posts a transaction: header, lines, balance and position counters, lots and serials; all or nothing. */
  async post(posting: Posting): Promise<TransactionView> {
    if (!posting.lines.length) throw validationFailed('A posting needs at least one line');
    await this.expireDue();
    const lines = await this.resolve(posting.lines);
    await this.applyCounters(lines);
    await this.moveSerials(lines);
    return this.writeTransaction(posting, lines);
  }

  private async resolve(lines: PostingLine[]): Promise<ResolvedLine[]> {
    const items = await this.refs.items(lines.map((l) => l.itemId));
    const locations = await this.refs.locations(lines.map((l) => l.locationId));
    const statuses = await this.refs.statuses();
    const resolved: ResolvedLine[] = [];
    for (const line of lines) {
      const f = line.field;
      const qtyField = at(f, line.qtyField ?? 'qty');
      const item = await this.refs.stockItem(line.itemId, at(f, 'itemId'), items);
      const location = this.refs.location(locations, line.locationId, at(f, 'locationId'));
      const status = this.refs.status(statuses, line.statusId, at(f, 'statusId'));
      const qty = toQty(line.qty);
      if (qty.isZero()) throw invalidField(qtyField, 'must not be 0');
      if (qty.decimalPlaces() > item.decimals)
        throw invalidField(qtyField, `must have at most ${item.decimals} decimals (the base unit of ${item.itemNo})`);
      const allocatedDelta = toQty(line.allocatedDelta ?? 0);
      const serialNos = this.checkSerials(line, item, qty, qtyField);
      this.checkLotFields(line, item);
      resolved.push({ line, item, location, status, lotId: null, qty, allocatedDelta, serialNos });
    }
    await this.resolveLots(resolved);
    return resolved;
  }

  private checkSerials(line: PostingLine, item: ItemRef, qty: Decimal, qtyField: string): string[] {
    const field = at(line.field, 'serialNos');
    const serials = line.serialNos ?? [];
    if (!item.serialTracked) {
      if (serials.length) throw invalidField(field, `must be empty: ${item.itemNo} is not serial-tracked`);
      return [];
    }
    if (!qty.isInteger()) throw invalidField(qtyField, `must be whole units: ${item.itemNo} is serial-tracked`);
    if (!serials.length && line.pickSerials && qty.lt(0)) return [];
    if (serials.length !== qty.abs().toNumber())
      throw invalidField(field, `must list one serial number per unit (${qty.abs().toFixed()}) of serial-tracked ${item.itemNo}`);
    if (new Set(serials).size !== serials.length) throw invalidField(field, 'must not repeat a serial number');
    return serials;
  }

  private checkLotFields(line: PostingLine, item: ItemRef): void {
    if (item.lotTracked) {
      if (!line.lotId && !line.lotNo) throw invalidField(at(line.field, 'lotNo'), `is required: ${item.itemNo} is lot-tracked`);
      return;
    }
    if (line.lotId || line.lotNo) throw invalidField(at(line.field, 'lotNo'), `must be empty: ${item.itemNo} is not lot-tracked`);
    if (line.expiryDate) throw invalidField(at(line.field, 'expiryDate'), `must be empty: ${item.itemNo} is not lot-tracked`);
  }

  /** Finds the lots of lot-tracked lines; creates new lot numbers on inbound lines. */
  private async resolveLots(lines: ResolvedLine[]): Promise<void> {
    const tracked = lines.filter((l) => l.item.lotTracked);
    if (!tracked.length) return;
    const byId = tracked.filter((l) => l.line.lotId);
    const byNo = tracked.filter((l) => !l.line.lotId);
    const found: Array<{ id: string; itemId: string; lot_no: string; expiry_date: string | null }> = await this.m.query(
      `SELECT id, item_id AS "itemId", lot_no, to_char(expiry_date, 'YYYY-MM-DD') AS expiry_date FROM lots
        WHERE tenant_id = $1
          AND (id = ANY($2::uuid[]) OR (item_id, lot_no) IN (SELECT * FROM unnest($3::uuid[], $4::text[])))`,
      [this.tenant, byId.map((l) => l.line.lotId), byNo.map((l) => l.item.id), byNo.map((l) => l.line.lotNo)],
    );
    for (const l of byId) {
      const lot = found.find((x) => x.id === l.line.lotId);
      this.refs.lotOfItem(lot, l.item, at(l.line.field, 'lotId'));
      this.checkExpiry(l, lot!.expiry_date);
      l.lotId = lot!.id;
    }
    for (const l of byNo) {
      const lot = found.find((x) => x.itemId === l.item.id && x.lot_no === l.line.lotNo);
      if (lot) {
        this.checkExpiry(l, lot.expiry_date);
        l.lotId = lot.id;
      } else if (l.qty.lt(0)) {
        throw insufficientStock(`No stock of ${l.item.itemNo} lot ${l.line.lotNo}`, [
          this.detail(l, l.qty.abs(), new Qty(0)),
        ]);
      } else {
        l.lotId = await this.createLot(l);
      }
    }
  }

  private checkExpiry(l: ResolvedLine, expiry: string | null): void {
    if (l.line.expiryDate && l.line.expiryDate !== expiry)
      throw invalidField(at(l.line.field, 'expiryDate'), `does not match the lot's expiry date (${expiry ?? 'none'})`);
  }

  private async createLot(l: ResolvedLine): Promise<string> {
    if (l.item.expiryTracked && !l.line.expiryDate)
      throw invalidField(at(l.line.field, 'expiryDate'), `is required for a new lot: ${l.item.itemNo} is expiry-tracked`);
    const [created] = await this.m.query(
      `WITH ins AS (
         INSERT INTO lots (tenant_id, item_id, lot_no, expiry_date) VALUES ($1, $2, $3, $4)
         ON CONFLICT (tenant_id, item_id, lot_no) DO NOTHING RETURNING id)
       SELECT id FROM ins`,
      [this.tenant, l.item.id, l.line.lotNo, l.line.expiryDate ?? null],
    );
    if (created) return created.id;
    // A concurrent posting created the same lot number and committed while this insert waited on it:
    // only a new statement (a new snapshot) sees that lot.
    const [existing] = await this.m.query(`SELECT id, to_char(expiry_date, 'YYYY-MM-DD') AS expiry_date FROM lots WHERE tenant_id = $1 AND item_id = $2 AND lot_no = $3`, [
      this.tenant, l.item.id, l.line.lotNo,
    ]);
    this.checkExpiry(l, existing.expiry_date);
    return existing.id;
  }

  /** Balance and position counters, each an atomic increment, in key order, guarded by CHECKs. */
  private async applyCounters(lines: ResolvedLine[]): Promise<void> {
    const balances = new Map<string, Counter>();
    lines.forEach((l, i) => {
      const key = balanceKey({ itemId: l.item.id, locationId: l.location.id, lotId: l.lotId, statusId: l.status.id });
      const c = balances.get(key) ?? {
        itemId: l.item.id, facilityId: l.location.facilityId, locationId: l.location.id, lotId: l.lotId,
        statusId: l.status.id, onHand: new Qty(0), allocated: new Qty(0), line: i,
      };
      c.onHand = c.onHand.plus(l.qty);
      c.allocated = c.allocated.plus(l.allocatedDelta);
      balances.set(key, c);
    });
    const keys = [...balances.keys()].sort();
    const changed = keys.map((k) => balances.get(k)!).filter((c) => !c.onHand.isZero() || !c.allocated.isZero());
    await this.guarded('ledger_balances', () => this.upsertBalances(changed), () => this.balanceShortage(changed, lines));

    const available = new Set(lines.filter((l) => l.status.isAvailable).map((l) => l.status.id));
    const positions = new Map<string, Counter>();
    for (const c of changed.filter((c) => available.has(c.statusId))) {
      const key = `${c.itemId}|${c.facilityId}`;
      const p = positions.get(key) ?? { ...c, onHand: new Qty(0), allocated: new Qty(0) };
      p.onHand = p.onHand.plus(c.onHand);
      p.allocated = p.allocated.plus(c.allocated);
      positions.set(key, p);
    }
    const posChanged = [...positions.keys()].sort().map((k) => positions.get(k)!).filter((p) => !p.onHand.isZero() || !p.allocated.isZero());
    await this.guarded('ledger_positions', () => this.upsertPositions(posChanged), () => this.positionShortage(posChanged, lines));
  }

  /**
   * Balance counters: missing rows are created at zero (a CHECK is evaluated on an insert's proposed
   * row before ON CONFLICT applies, so deltas cannot ride on the insert), the rows are locked in key
   * order, then each is changed by an atomic increment that the CHECKs guard.
   */
  private async upsertBalances(counters: Counter[]): Promise<void> {
    if (!counters.length) return;
    await this.createAndLockBalances(counters);
    await this.m.query(
      `UPDATE balances b
          SET qty_on_hand = b.qty_on_hand + k.on_hand, qty_allocated = b.qty_allocated + k.allocated, updated_at = now()
         FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::numeric[], $7::numeric[])
              AS k(item_id, location_id, lot_id, status_id, on_hand, allocated)
        WHERE b.tenant_id = $1 AND b.item_id = k.item_id AND b.location_id = k.location_id
          AND b.lot_id IS NOT DISTINCT FROM k.lot_id AND b.status_id = k.status_id`,
      [
        this.tenant,
        counters.map((c) => c.itemId),
        counters.map((c) => c.locationId),
        counters.map((c) => c.lotId),
        counters.map((c) => c.statusId),
        counters.map((c) => sql(c.onHand)),
        counters.map((c) => sql(c.allocated)),
      ],
    );
  }

  /** Creates the missing balance rows of `keys` at zero, then locks all of them in key order. */
  private async createAndLockBalances(keys: BalanceKey[]): Promise<Array<BalanceKeyRow>> {
    await this.m.query(
      `INSERT INTO balances (tenant_id, item_id, facility_id, location_id, lot_id, status_id)
       SELECT $1, k.item_id, k.facility_id, k.location_id, k.lot_id, k.status_id
         FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::uuid[])
              WITH ORDINALITY AS k(item_id, facility_id, location_id, lot_id, status_id, ord)
        ORDER BY k.ord
       ON CONFLICT ON CONSTRAINT balances_key DO NOTHING`,
      [this.tenant, keys.map((c) => c.itemId), keys.map((c) => c.facilityId), keys.map((c) => c.locationId), keys.map((c) => c.lotId), keys.map((c) => c.statusId)],
    );
    return this.m.query(
      `SELECT b.item_id, b.location_id, b.lot_id, b.status_id, b.qty_on_hand FROM balances b
         JOIN unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[]) AS k(item_id, location_id, lot_id, status_id)
           ON b.item_id = k.item_id AND b.location_id = k.location_id AND b.lot_id IS NOT DISTINCT FROM k.lot_id AND b.status_id = k.status_id
        WHERE b.tenant_id = $1
        ORDER BY b.item_id, b.location_id, b.lot_id NULLS FIRST, b.status_id
          FOR UPDATE OF b`,
      [this.tenant, keys.map((c) => c.itemId), keys.map((c) => c.locationId), keys.map((c) => c.lotId), keys.map((c) => c.statusId)],
    );
  }

  /**
   * Locks the balances of `keys` for the rest of the unit of work (creating missing ones at zero, so no
   * posting can slip in between) and returns their on-hand quantities, keyed by `balanceKey()`. For
   * documents that post "set to" quantities, such as count completion.
   */
  async lockBalances(keys: Array<Omit<BalanceKey, 'facilityId'>>): Promise<Map<string, Decimal>> {
    if (!keys.length) return new Map();
    const locations = await this.refs.locations(keys.map((k) => k.locationId));
    const withFacility = keys.map((k) => ({ ...k, facilityId: locations.get(k.locationId)?.facilityId ?? '' }));
    const unknown = withFacility.find((k) => !k.facilityId);
    if (unknown) throw unknownReference('locationId');
    const rows = await this.createAndLockBalances(withFacility);
    return new Map(
      rows.map((r) => [balanceKey({ itemId: r.item_id, locationId: r.location_id, lotId: r.lot_id, statusId: r.status_id }), toQty(r.qty_on_hand)]),
    );
  }

  /** Position counters per (item, facility), the same way: create at zero, lock in key order, increment. */
  private async upsertPositions(positions: Array<{ itemId: string; facilityId: string; onHand?: Decimal; allocated?: Decimal; reserved?: Decimal }>): Promise<void> {
    if (!positions.length) return;
    const keys = [this.tenant, positions.map((p) => p.itemId), positions.map((p) => p.facilityId)];
    await this.m.query(
      `INSERT INTO inventory_positions (tenant_id, item_id, facility_id)
       SELECT $1, k.item_id, k.facility_id FROM unnest($2::uuid[], $3::uuid[]) WITH ORDINALITY AS k(item_id, facility_id, ord)
        ORDER BY k.ord
       ON CONFLICT (tenant_id, item_id, facility_id) DO NOTHING`,
      keys,
    );
    if (positions.length > 1) {
      await this.m.query(
        `SELECT 1 FROM inventory_positions p JOIN unnest($2::uuid[], $3::uuid[]) AS k(item_id, facility_id)
             ON p.item_id = k.item_id AND p.facility_id = k.facility_id
          WHERE p.tenant_id = $1 ORDER BY p.item_id, p.facility_id FOR UPDATE OF p`,
        keys,
      );
    }
    const zero = new Qty(0);
    await this.m.query(
      `UPDATE inventory_positions p
          SET qty_available_on_hand = p.qty_available_on_hand + k.on_hand, qty_allocated = p.qty_allocated + k.allocated,
              qty_reserved = p.qty_reserved + k.reserved, updated_at = now()
         FROM unnest($2::uuid[], $3::uuid[], $4::numeric[], $5::numeric[], $6::numeric[]) AS k(item_id, facility_id, on_hand, allocated, reserved)
        WHERE p.tenant_id = $1 AND p.item_id = k.item_id AND p.facility_id = k.facility_id`,
      [
        ...keys,
        positions.map((p) => sql(p.onHand ?? zero)),
        positions.map((p) => sql(p.allocated ?? zero)),
        positions.map((p) => sql(p.reserved ?? zero)),
      ],
    );
  }

  /** After a refused balance update: which keys lacked stock, for the 409's details. */
  private async balanceShortage(counters: Counter[], lines: ResolvedLine[]): Promise<AppError> {
    const rows: Array<{ item_id: string; location_id: string; lot_id: string | null; status_id: string; free: string }> =
      await this.m.query(
        `SELECT item_id, location_id, lot_id, status_id, qty_on_hand - qty_allocated AS free FROM balances
          WHERE tenant_id = $1 AND item_id = ANY($2::uuid[]) AND location_id = ANY($3::uuid[])`,
        [this.tenant, unique(counters.map((c) => c.itemId)), unique(counters.map((c) => c.locationId))],
      );
    const details = counters
      .filter((c) => c.onHand.lt(0))
      .map((c) => {
        const row = rows.find((r) => r.item_id === c.itemId && r.location_id === c.locationId && r.lot_id === c.lotId && r.status_id === c.statusId);
        const free = toQty(row?.free ?? 0);
        // Issuing allocated stock may use its own allocation as well as the free quantity.
        return { c, requested: c.onHand.abs(), available: free.plus(c.allocated.abs()) };
      })
      .filter((d) => d.requested.greaterThan(d.available))
      .map((d) => this.detail(lines[d.c.line], d.requested, d.available));
    return this.shortage(details);
  }

  private async positionShortage(positions: Counter[], lines: ResolvedLine[]): Promise<AppError> {
    const rows: Array<{ item_id: string; facility_id: string; atp: string }> = await this.m.query(
      `SELECT item_id, facility_id, qty_available_on_hand - qty_allocated - qty_reserved AS atp FROM inventory_positions
        WHERE tenant_id = $1 AND item_id = ANY($2::uuid[])`,
      [this.tenant, unique(positions.map((p) => p.itemId))],
    );
    const details = positions
      .filter((p) => p.onHand.lt(0))
      .map((p) => {
        const row = rows.find((r) => r.item_id === p.itemId && r.facility_id === p.facilityId);
        return { p, requested: p.onHand.abs(), available: toQty(row?.atp ?? 0).plus(p.allocated.abs()) };
      })
      .filter((d) => d.requested.greaterThan(d.available))
      .map((d) => ({
        ...this.detail(lines[d.p.line], d.requested, d.available),
        message: 'would leave the facility with less available stock than it has allocated and reserved; release holds first',
      }));
    return this.shortage(details);
  }

  private detail(l: ResolvedLine, requested: Decimal, available: Decimal): ErrorDetail {
    return {
      field: at(l.line.field, l.line.qtyField ?? 'qty'),
      message: 'not enough stock',
      itemId: l.item.id,
      itemNo: l.item.itemNo,
      locationId: l.location.id,
      facilityId: l.location.facilityId,
      lotId: l.lotId,
      statusId: l.status.id,
      requested: requested.toNumber(),
      available: Decimal.max(available, 0).toNumber(),
    };
  }

  private shortage(details: ErrorDetail[]): AppError {
    const first = details[0];
    return insufficientStock(
      first
        ? `Insufficient stock of ${first.itemNo}: requested ${first.requested}, available ${first.available}`
        : 'Insufficient stock',
      details,
    );
  }

  /** Serial numbers follow their units: inbound lines put serials in stock, outbound lines take them out. */
  private async moveSerials(lines: ResolvedLine[]): Promise<void> {
    const serialLines = lines.filter((l) => l.item.serialTracked);
    // Outbound first, so a move (out of one location, into another) sees the serial leave before it arrives.
    for (const l of serialLines.filter((x) => x.qty.lt(0))) {
      const n = l.qty.abs().toNumber();
      // Wrapped in a SELECT: TypeORM returns a bare UPDATE … RETURNING as [rows, rowCount], not rows.
      const taken: Array<{ serial_no: string }> = await this.m.query(
        `WITH taken AS (
           UPDATE serials s SET in_stock = false, updated_at = now()
            WHERE s.tenant_id = $1 AND s.id IN (
                  SELECT id FROM serials
                   WHERE tenant_id = $1 AND item_id = $2 AND in_stock AND location_id = $3
                     AND lot_id IS NOT DISTINCT FROM $4 AND status_id = $5
                     AND ($6::text[] IS NULL OR serial_no = ANY($6::text[]))
                   ORDER BY serial_no LIMIT $7 FOR UPDATE)
            RETURNING s.serial_no)
         SELECT serial_no FROM taken ORDER BY serial_no`,
        [this.tenant, l.item.id, l.location.id, l.lotId, l.status.id, l.serialNos.length ? l.serialNos : null, n],
      );
      if (taken.length < n) {
        const missing = l.serialNos.filter((s) => !taken.some((t) => t.serial_no === s));
        if (missing.length) throw invalidField(at(l.line.field, 'serialNos'), `not in stock at this location: ${missing.join(', ')}`);
        throw insufficientStock(`Not enough serials of ${l.item.itemNo} in stock at this location`, [
          this.detail(l, l.qty.abs(), toQty(taken.length)),
        ]);
      }
      l.serialNos = taken.map((t) => t.serial_no);
    }
    for (const l of serialLines.filter((x) => x.qty.gt(0))) {
      const placed: Array<{ serial_no: string }> = await this.m.query(
        `INSERT INTO serials AS s (tenant_id, item_id, serial_no, lot_id, location_id, status_id, in_stock)
         SELECT $1, $2, sn, $3, $4, $5, true FROM unnest($6::text[]) AS sn
         ON CONFLICT (tenant_id, item_id, serial_no) DO UPDATE
            SET in_stock = true, lot_id = EXCLUDED.lot_id, location_id = EXCLUDED.location_id,
                status_id = EXCLUDED.status_id, updated_at = now()
          WHERE NOT s.in_stock
         RETURNING s.serial_no`,
        [this.tenant, l.item.id, l.lotId, l.location.id, l.status.id, l.serialNos],
      );
      if (placed.length < l.serialNos.length) {
        const dup = l.serialNos.filter((s) => !placed.some((p) => p.serial_no === s));
        throw new AppError(409, 'duplicate', `Serial numbers already in stock: ${dup.join(', ')}`, [
          { field: at(l.line.field, 'serialNos'), message: `already in stock: ${dup.join(', ')}` },
        ]);
      }
    }
  }

  private async writeTransaction(posting: Posting, lines: ResolvedLine[]): Promise<TransactionView> {
    const id = randomUUID();
    const txnNo = await this.numbers.next('TX');
    const [header]: TransactionRow[] = await this.m.query(
      `INSERT INTO ledger_transactions (tenant_id, id, txn_no, type, posted_by, reason, source_type, source_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING id, txn_no, type, posted_at, posted_by, reason, source_type, source_id`,
      [this.tenant, id, txnNo, posting.type, this.uow.userId, posting.reason ?? null, posting.sourceType ?? null, posting.sourceId ?? null],
    );
    const rows: LineRow[] = lines.map((l, i) => ({
      transaction_id: id,
      line_no: i + 1,
      item_id: l.item.id,
      location_id: l.location.id,
      lot_id: l.lotId,
      status_id: l.status.id,
      qty_delta: sql(l.qty),
    }));
    await this.m.query(
      `INSERT INTO ledger_lines (tenant_id, transaction_id, line_no, item_id, facility_id, location_id, lot_id, status_id, qty_delta, serial_nos)
       SELECT $1, $2, k.line_no, k.item_id, k.facility_id, k.location_id, k.lot_id, k.status_id, k.qty_delta,
              NULLIF(string_to_array(k.serials, E'\\x1f'), '{}')
         FROM unnest($3::int[], $4::uuid[], $5::uuid[], $6::uuid[], $7::uuid[], $8::uuid[], $9::numeric[], $10::text[])
              AS k(line_no, item_id, facility_id, location_id, lot_id, status_id, qty_delta, serials)`,
      [
        this.tenant,
        id,
        rows.map((r) => r.line_no),
        rows.map((r) => r.item_id),
        lines.map((l) => l.location.facilityId),
        rows.map((r) => r.location_id),
        rows.map((r) => r.lot_id),
        rows.map((r) => r.status_id),
        rows.map((r) => r.qty_delta),
        lines.map((l) => l.serialNos.join('\x1f')),
      ],
    );
    return transactionView(header, rows);
  }

  /** Runs `run` in a savepoint: on any error only its own changes are rolled back, and the error is rethrown. */
  private async savepoint<T>(name: string, run: () => Promise<T>): Promise<T> {
    await this.m.query(`SAVEPOINT ${name}`);
    try {
      const result = await run();
      await this.m.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (err) {
      await this.m.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw err;
    }
  }

  /** Runs guarded statements: a CHECK violation rolls back just them and becomes a 409 with details. */
  private async guarded(name: string, run: () => Promise<void>, explain: () => Promise<AppError>): Promise<void> {
    try {
      await this.savepoint(name, run);
    } catch (err) {
      if (AppError.sqlState(err) !== '23514') throw err;
      throw await explain();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Holds: reservations and allocations

  /** A soft hold at (item, facility), refused beyond the facility's available-to-promise quantity. */
  async reserve(hold: Hold): Promise<ReservationView> {
    const item = await this.refs.stockItem(hold.itemId, at(hold.field, 'itemId'));
    await this.refs.facilityExists(hold.facilityId, at(hold.field, 'facilityId'));
    const qty = this.positiveQty(hold.qty, item, at(hold.field, 'qty'));
    await this.expireDue();
    await this.changeReserved(item, hold.facilityId, qty, at(hold.field, 'qty'));
    const id = randomUUID();
    const reservationNo = await this.numbers.next('RS');
    await this.m.query(
      `INSERT INTO reservations (tenant_id, id, reservation_no, item_id, facility_id, qty, status, demand_type,
                                 demand_id, demand_line_id, expires_at, notes, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, 'open', $7, $8, $9, $10, $11, $12, $12)`,
      [this.tenant, id, reservationNo, item.id, hold.facilityId, sql(qty), hold.demandType ?? 'manual',
        hold.demandId ?? null, hold.demandLineId ?? null, hold.expiresAt ?? null, hold.notes ?? null, this.uow.userId],
    );
    if (hold.expiresAt) await this.releaseIfExpired(id);
    return this.reservation(id);
  }

  /** Changes an open reservation: quantity (not below what is allocated or fulfilled; re-checked against ATP), expiry, notes. */
  async updateReservation(
    id: string,
    change: { qty?: Decimal.Value; expiresAt?: Date | null; notes?: string | null },
    ifMatch?: number,
  ): Promise<ReservationView> {
    await this.expireDue();
    const r = await this.lockReservation(id, ifMatch);
    if (r.status !== 'open') throw invalidState(`Reservation ${r.reservation_no} is ${r.status}; only an open reservation can be changed`);
    let newQty = toQty(r.qty);
    if (change.qty !== undefined) {
      const item = await this.refs.stockItem(r.item_id, 'itemId');
      newQty = this.positiveQty(change.qty, item, 'qty');
      const held = toQty(r.qty_allocated).plus(r.qty_fulfilled);
      if (newQty.lessThan(held)) throw invalidField('qty', `must not be below the allocated and fulfilled quantity (${held.toFixed()})`);
      const delta = newQty.minus(r.qty);
      if (!delta.isZero()) await this.changeReserved(item, r.facility_id, delta, 'qty');
    }
    await this.m.query(
      `UPDATE reservations SET qty = $3, expires_at = $4, notes = $5, status = $6,
              version = version + 1, updated_by = $7, updated_at = now()
        WHERE tenant_id = $1 AND id = $2`,
      [this.tenant, id, sql(newQty),
        change.expiresAt !== undefined ? change.expiresAt : r.expires_at,
        change.notes !== undefined ? change.notes : r.notes,
        statusOf(newQty, toQty(r.qty_allocated), toQty(r.qty_fulfilled)), this.uow.userId],
    );
    if (change.expiresAt) await this.releaseIfExpired(id);
    return this.reservation(id);
  }

  /**
   * Pins a reservation's unallocated quantity to balances (Available statuses, unallocated stock only).
   * Without pins the remainder is allocated automatically: earliest expiry first, then oldest lot,
   * then location code.
   */
  async allocate(id: string, pins?: Pin[], ifMatch?: number): Promise<ReservationView> {
    await this.expireDue();
    const r = await this.lockReservation(id, ifMatch);
    if (r.status !== 'open') throw invalidState(`Reservation ${r.reservation_no} is ${r.status}; only an open reservation can be allocated`);
    const item = await this.refs.stockItem(r.item_id, 'itemId');
    const remaining = toQty(r.qty).minus(r.qty_allocated).minus(r.qty_fulfilled);
    const plan = pins?.length ? await this.explicitPlan(r, item, pins, remaining) : await this.automaticPlan(r, remaining);
    const total = sum(plan.map((p) => p.qty));
    if (total.isZero()) return this.reservation(id);

    // Balances in key order, then the position: reserved becomes allocated.
    const ordered = [...plan].sort((a, b) => a.key.localeCompare(b.key));
    await this.guarded(
      'ledger_allocate',
      async () => {
        for (const p of ordered) {
          await this.m.query(
            `UPDATE balances SET qty_allocated = qty_allocated + $3, updated_at = now() WHERE tenant_id = $1 AND id = $2`,
            [this.tenant, p.balanceId, sql(p.qty)],
          );
        }
      },
      () => this.allocationShortage(item, plan),
    );
    await this.upsertPositions([{ itemId: r.item_id, facilityId: r.facility_id, allocated: total, reserved: total.negated() }]);
    await this.m.query(
      `INSERT INTO allocations (tenant_id, id, reservation_id, balance_id, item_id, location_id, lot_id, qty, status)
       SELECT $1, gen_random_uuid(), $2, k.balance_id, $3, k.location_id, k.lot_id, k.qty, 'active'
         FROM unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::numeric[]) AS k(balance_id, location_id, lot_id, qty)`,
      [this.tenant, id, r.item_id, plan.map((p) => p.balanceId), plan.map((p) => p.locationId), plan.map((p) => p.lotId), plan.map((p) => sql(p.qty))],
    );
    const allocated = toQty(r.qty_allocated).plus(total);
    await this.m.query(
      `UPDATE reservations SET qty_allocated = $3, status = $4, version = version + 1, updated_by = $5, updated_at = now()
        WHERE tenant_id = $1 AND id = $2`,
      [this.tenant, id, sql(allocated), statusOf(toQty(r.qty), allocated, toQty(r.qty_fulfilled)), this.uow.userId],
    );
    return this.reservation(id);
  }

  /** After a refused allocation: the pins that asked for more than their balance has free, for the 409's details. */
  private async allocationShortage(item: ItemRef, plan: AllocationPlan[]): Promise<AppError> {
    const rows: Array<{ id: string; free: string }> = await this.m.query(
      `SELECT id, qty_on_hand - qty_allocated AS free FROM balances WHERE tenant_id = $1 AND id = ANY($2::uuid[])`,
      [this.tenant, unique(plan.map((p) => p.balanceId))],
    );
    const asked = new Map<string, Decimal>();
    for (const p of plan) asked.set(p.balanceId, (asked.get(p.balanceId) ?? new Qty(0)).plus(p.qty));
    const details = plan
      .filter((p, i) => plan.findIndex((q) => q.balanceId === p.balanceId) === i)
      .map((p) => ({ p, requested: asked.get(p.balanceId)!, available: toQty(rows.find((r) => r.id === p.balanceId)?.free ?? 0) }))
      .filter((d) => d.requested.greaterThan(d.available))
      .map(({ p, requested, available }) => ({
        field: p.field,
        message: 'not enough unallocated stock',
        itemId: item.id,
        itemNo: item.itemNo,
        locationId: p.locationId,
        lotId: p.lotId,
        requested: requested.toNumber(),
        available: Decimal.max(available, 0).toNumber(),
      }));
    return this.shortage(details);
  }

  private async explicitPlan(r: ReservationRow, item: ItemRef, pins: Pin[], remaining: Decimal): Promise<AllocationPlan[]> {
    const locations = await this.refs.locations(pins.map((p) => p.locationId));
    const lots = await this.refs.lots(pins.flatMap((p) => (p.lotId ? [p.lotId] : [])));
    const plan: AllocationPlan[] = [];
    for (const [i, pin] of pins.entries()) {
      const field = `allocations[${i}]`;
      const loc = this.refs.location(locations, pin.locationId, `${field}.locationId`, r.facility_id);
      this.refs.checkLotId(lots, pin.lotId, item, `${field}.lotId`);
      const q = this.positiveQty(pin.qty, item, `${field}.qty`);
      const [balance]: Array<{ id: string; status_id: string }> = await this.m.query(
        `SELECT b.id, b.status_id FROM balances b JOIN stock_statuses s ON s.tenant_id = b.tenant_id AND s.id = b.status_id
          WHERE b.tenant_id = $1 AND b.item_id = $2 AND b.location_id = $3 AND b.lot_id IS NOT DISTINCT FROM $4
            AND s.is_available
          ORDER BY b.qty_on_hand - b.qty_allocated >= $5 DESC, s.code = 'AVAILABLE' DESC, s.code LIMIT 1`,
        [this.tenant, item.id, loc.id, pin.lotId ?? null, sql(q)],
      );
      if (!balance)
        throw insufficientStock(`No available stock of ${item.itemNo} at ${loc.code}`, [
          { field: `${field}.qty`, message: 'no available stock', itemId: item.id, locationId: loc.id, requested: q.toNumber(), available: 0 },
        ]);
      plan.push({ balanceId: balance.id, locationId: loc.id, lotId: pin.lotId ?? null, qty: q, key: balanceKey({ itemId: item.id, locationId: loc.id, lotId: pin.lotId ?? null, statusId: balance.status_id }), field: `${field}.qty` });
    }
    const total = sum(plan.map((p) => p.qty));
    if (total.greaterThan(remaining))
      throw invalidField('allocations', `total ${total.toFixed()} exceeds the unallocated quantity ${remaining.toFixed()}`);
    return plan;
  }

  /** Free available stock at the facility, locked in balance-key order, taken earliest expiry first. */
  private async automaticPlan(r: ReservationRow, remaining: Decimal): Promise<AllocationPlan[]> {
    const candidates: Array<{ id: string; location_id: string; lot_id: string | null; free: string; item_id: string; status_id: string }> =
      await this.m.query(
        `WITH locked AS (
           SELECT b.id, b.item_id, b.location_id, b.lot_id, b.status_id, b.qty_on_hand - b.qty_allocated AS free
             FROM balances b JOIN stock_statuses s ON s.tenant_id = b.tenant_id AND s.id = b.status_id AND s.is_available
            WHERE b.tenant_id = $1 AND b.item_id = $2 AND b.facility_id = $3 AND b.qty_on_hand > b.qty_allocated
            ORDER BY b.item_id, b.location_id, b.lot_id NULLS FIRST, b.status_id
              FOR UPDATE OF b)
         SELECT k.* FROM locked k
           JOIN locations l ON l.tenant_id = $1 AND l.id = k.location_id
           LEFT JOIN lots t ON t.tenant_id = $1 AND t.id = k.lot_id
          ORDER BY t.expiry_date ASC NULLS LAST, t.created_at ASC NULLS LAST, l.code, k.id`,
        [this.tenant, r.item_id, r.facility_id],
      );
    const plan: AllocationPlan[] = [];
    let left = remaining;
    for (const c of candidates) {
      if (!left.gt(0)) break;
      const take = Decimal.min(left, c.free);
      plan.push({ balanceId: c.id, locationId: c.location_id, lotId: c.lot_id, qty: take, key: balanceKey({ itemId: c.item_id, locationId: c.location_id, lotId: c.lot_id, statusId: c.status_id }), field: 'qty' });
      left = left.minus(take);
    }
    if (left.gt(0))
      throw insufficientStock(`Not enough unallocated stock to allocate the reservation`, [
        { field: 'qty', message: 'not enough unallocated stock', itemId: r.item_id, facilityId: r.facility_id, requested: remaining.toNumber(), available: remaining.minus(left).toNumber() },
      ]);
    return plan;
  }

  /** Releases (or cancels) an open or allocated reservation: everything it holds is freed. */
  async release(id: string, outcome: 'released' | 'cancelled', ifMatch?: number): Promise<ReservationView> {
    await this.expireDue();
    const r = await this.lockReservation(id, ifMatch);
    if (!ACTIVE.includes(r.status))
      throw invalidState(`Reservation ${r.reservation_no} is ${r.status}; only an open or allocated reservation can be ${outcome}`);
    await this.freeHolds([r], outcome);
    return this.reservation(id);
  }

  /**
   * Issues `qty` (default: all) of a reservation's allocated stock as one posting (fulfillment,
   * shipment, production), consuming the allocations; the reservation is fulfilled when complete.
   */
  async issueAllocated(
    id: string,
    options: { qty?: Decimal.Value; type: Posting['type']; sourceType?: string; sourceId?: string; reason?: string; serialNos?: string[]; ifMatch?: number },
  ): Promise<{ transaction: TransactionView; reservation: ReservationView }> {
    await this.expireDue();
    const r = await this.lockReservation(id, options.ifMatch);
    if (r.status !== 'allocated' && !(r.status === 'open' && options.type !== 'fulfillment'))
      throw invalidState(`Reservation ${r.reservation_no} is ${r.status}; only allocated stock can be issued`);
    const allocations: AllocationRow[] = await this.m.query(
      `SELECT a.* FROM allocations a
         JOIN locations l ON l.tenant_id = a.tenant_id AND l.id = a.location_id
         LEFT JOIN lots t ON t.tenant_id = a.tenant_id AND t.id = a.lot_id
        WHERE a.tenant_id = $1 AND a.reservation_id = $2 AND a.status = 'active'
        ORDER BY t.expiry_date ASC NULLS LAST, l.code, a.id`,
      [this.tenant, id],
    );
    const allocated = sum(allocations.map((a) => toQty(a.qty)));
    const wanted = options.qty === undefined ? allocated : toQty(options.qty);
    if (!wanted.gt(0)) throw invalidField('qty', 'must be > 0');
    if (wanted.greaterThan(allocated))
      throw insufficientStock(`Reservation ${r.reservation_no} has ${allocated.toFixed()} allocated; cannot issue ${wanted.toFixed()}`, [
        { field: 'qty', message: 'more than is allocated', itemId: r.item_id, requested: wanted.toNumber(), available: allocated.toNumber() },
      ]);
    const statuses: Array<{ id: string; status_id: string }> = await this.m.query(
      `SELECT id, status_id FROM balances WHERE tenant_id = $1 AND id = ANY($2::uuid[])`,
      [this.tenant, allocations.map((a) => a.balance_id)],
    );
    const take: Array<{ a: AllocationRow; qty: Decimal }> = [];
    let left = wanted;
    for (const a of allocations) {
      if (!left.gt(0)) break;
      const q = Decimal.min(left, a.qty);
      take.push({ a, qty: q });
      left = left.minus(q);
    }
    let serials = options.serialNos ?? [];
    const transaction = await this.post({
      type: options.type,
      reason: options.reason ?? null,
      sourceType: options.sourceType ?? 'reservation',
      sourceId: options.sourceId ?? id,
      lines: take.map(({ a, qty: q }) => {
        const n = q.toNumber();
        const mine = serials.slice(0, n);
        serials = serials.slice(n);
        return {
          itemId: a.item_id,
          locationId: a.location_id,
          lotId: a.lot_id,
          statusId: statuses.find((s) => s.id === a.balance_id)!.status_id,
          qty: q.negated(),
          allocatedDelta: q.negated(),
          serialNos: mine.length ? mine : undefined,
          pickSerials: !mine.length,
        };
      }),
    });
    for (const { a, qty: q } of take) {
      await this.m.query(
        `UPDATE allocations SET qty = qty - $3, qty_issued = qty_issued + $3,
                status = CASE WHEN qty - $3 = 0 THEN 'issued' ELSE status END, updated_at = now()
          WHERE tenant_id = $1 AND id = $2`,
        [this.tenant, a.id, sql(q)],
      );
    }
    const qtyAllocated = toQty(r.qty_allocated).minus(wanted);
    const qtyFulfilled = toQty(r.qty_fulfilled).plus(wanted);
    await this.m.query(
      `UPDATE reservations SET qty_allocated = $3, qty_fulfilled = $4, status = $5, version = version + 1,
              updated_by = $6, updated_at = now()
        WHERE tenant_id = $1 AND id = $2`,
      [this.tenant, id, sql(qtyAllocated), sql(qtyFulfilled), statusOf(toQty(r.qty), qtyAllocated, qtyFulfilled), this.uow.userId],
    );
    return { transaction, reservation: await this.reservation(id) };
  }

  /** Closes a reservation as fulfilled for what it has issued, freeing any rest (e.g. a short shipment). */
  async closeReservation(id: string): Promise<ReservationView> {
    const r = await this.lockReservation(id);
    if (ACTIVE.includes(r.status)) await this.freeHolds([r], toQty(r.qty_fulfilled).gt(0) ? 'fulfilled' : 'released');
    return this.reservation(id);
  }

  /**
   * Reservations whose expiresAt has passed stop holding stock and read as released. Swept once per
   * unit of work, before anything reads or changes holds (cheap: a partial index on expiry); `now()` is
   * fixed for the transaction, so a second sweep would find nothing new.
   */
  async expireDue(): Promise<void> {
    if (this.swept.has(this.m)) return;
    this.swept.add(this.m);
    await this.releaseExpired(
      `SELECT * FROM reservations
        WHERE tenant_id = $1 AND status IN ('open', 'allocated') AND expires_at <= now()
        ORDER BY id FOR UPDATE SKIP LOCKED`,
      [this.tenant],
    );
  }

  /** A reservation this unit of work just gave a past expiresAt: it holds nothing and reads as released at once. */
  private releaseIfExpired(id: string): Promise<void> {
    return this.releaseExpired(
      `SELECT * FROM reservations
        WHERE tenant_id = $1 AND id = $2 AND status IN ('open', 'allocated') AND expires_at <= now() FOR UPDATE`,
      [this.tenant, id],
    );
  }

  private async releaseExpired(select: string, params: unknown[]): Promise<void> {
    const due: ReservationRow[] = await this.m.query(select, params);
    if (!due.length) return;
    try {
      await this.savepoint('ledger_expire', () => this.freeHolds(due, 'released'));
    } catch (err) {
      if (AppError.sqlState(err) !== '23514') throw err;
      // A hold that cannot be freed means the counters have drifted (ledger:verify names the rows).
      // Free the others one by one and leave that one, so the tenant's other work goes on.
      for (const r of due) {
        try {
          await this.savepoint('ledger_expire_one', () => this.freeHolds([r], 'released'));
        } catch (e) {
          if (AppError.sqlState(e) !== '23514') throw e;
          this.logger.error(`expired reservation ${r.id} (tenant ${this.tenant}) could not be released: counters drifted`);
        }
      }
    }
  }

  /** Frees what reservations hold (allocations, reserved quantity) and sets their final status. Rows must be locked. */
  private async freeHolds(reservations: ReservationRow[], outcome: 'released' | 'cancelled' | 'fulfilled'): Promise<void> {
    const ids = reservations.map((r) => r.id);
    const allocations: Array<AllocationRow & { item_id: string; facility_id: string; key: string }> = await this.m.query(
      `SELECT a.*, b.facility_id, concat_ws('|', b.item_id, b.location_id, coalesce(b.lot_id::text, ''), b.status_id) AS key
         FROM allocations a JOIN balances b ON b.tenant_id = a.tenant_id AND b.id = a.balance_id
        WHERE a.tenant_id = $1 AND a.reservation_id = ANY($2::uuid[]) AND a.status = 'active'
        ORDER BY key`,
      [this.tenant, ids],
    );
    for (const a of allocations) {
      await this.m.query(
        `UPDATE balances SET qty_allocated = qty_allocated - $3, updated_at = now() WHERE tenant_id = $1 AND id = $2`,
        [this.tenant, a.balance_id, a.qty],
      );
    }
    const perPosition = new Map<string, { itemId: string; facilityId: string; allocated: Decimal; reserved: Decimal }>();
    for (const r of reservations) {
      const key = `${r.item_id}|${r.facility_id}`;
      const p = perPosition.get(key) ?? { itemId: r.item_id, facilityId: r.facility_id, allocated: new Qty(0), reserved: new Qty(0) };
      p.allocated = p.allocated.plus(r.qty_allocated);
      p.reserved = p.reserved.plus(toQty(r.qty).minus(r.qty_allocated).minus(r.qty_fulfilled));
      perPosition.set(key, p);
    }
    await this.upsertPositions(
      [...perPosition.keys()].sort().map((k) => {
        const p = perPosition.get(k)!;
        return { itemId: p.itemId, facilityId: p.facilityId, allocated: p.allocated.negated(), reserved: p.reserved.negated() };
      }),
    );
    await this.m.query(
      `UPDATE allocations SET status = 'released', updated_at = now()
        WHERE tenant_id = $1 AND reservation_id = ANY($2::uuid[]) AND status = 'active'`,
      [this.tenant, ids],
    );
    await this.m.query(
      `UPDATE reservations SET status = $3, qty_allocated = 0, version = version + 1, updated_by = $4, updated_at = now()
        WHERE tenant_id = $1 AND id = ANY($2::uuid[])`,
      [this.tenant, ids, outcome, this.uow.userId],
    );
  }

  private async changeReserved(item: ItemRef, facilityId: string, delta: Decimal, field: string): Promise<void> {
    await this.guarded(
      'ledger_reserve',
      () => this.upsertPositions([{ itemId: item.id, facilityId, reserved: delta }]),
      async () => {
        const [row] = await this.m.query(
          `SELECT qty_available_on_hand - qty_allocated - qty_reserved AS atp FROM inventory_positions
            WHERE tenant_id = $1 AND item_id = $2 AND facility_id = $3`,
          [this.tenant, item.id, facilityId],
        );
        const available = Decimal.max(toQty(row?.atp ?? 0), 0);
        return insufficientStock(
          `Insufficient stock of ${item.itemNo} to reserve: requested ${delta.toFixed()}, available to promise ${available.toFixed()}`,
          [{ field, message: 'exceeds the available-to-promise quantity', itemId: item.id, itemNo: item.itemNo, facilityId, requested: delta.toNumber(), available: available.toNumber() }],
        );
      },
    );
  }

  private positiveQty(value: Decimal.Value, item: ItemRef, field: string): Decimal {
    const q = toQty(value);
    if (!q.gt(0)) throw invalidField(field, 'must be > 0');
    if (q.decimalPlaces() > item.decimals)
      throw invalidField(field, `must have at most ${item.decimals} decimals (the base unit of ${item.itemNo})`);
    return q;
  }

  /**
   * Locks a reservation for the rest of the unit of work. One whose expiresAt has passed is released,
   * whatever its row still says (the sweep may have skipped it while another request held it), so no
   * action applies to it: acting on it here would free or issue its holds a second time.
   */
  private async lockReservation(id: string, ifMatch?: number): Promise<ReservationRow> {
    const [r]: Array<ReservationRow & { expired: boolean }> = await this.m.query(
      `SELECT *, (status IN ('open', 'allocated') AND expires_at <= now()) AS expired
         FROM reservations WHERE tenant_id = $1 AND id = $2 FOR UPDATE`,
      [this.tenant, id],
    );
    if (!r) throw notFound('Reservation');
    if (ifMatch !== undefined && ifMatch !== r.version)
      throw new AppError(412, 'version_conflict', `The reservation is at version ${r.version}; reload it and retry`);
    if (r.expired) throw invalidState(`Reservation ${r.reservation_no} is released: it expired at ${r.expires_at!.toISOString()}`);
    return r;
  }

  /** One reservation with its active allocations. */
  async reservation(id: string): Promise<ReservationView> {
    const [r]: ReservationRow[] = await this.m.query(`SELECT * FROM reservations WHERE tenant_id = $1 AND id = $2`, [this.tenant, id]);
    if (!r) throw notFound('Reservation');
    const allocations: AllocationRow[] = await this.m.query(
      `SELECT * FROM allocations WHERE tenant_id = $1 AND reservation_id = $2 AND status = 'active' ORDER BY created_at, id`,
      [this.tenant, id],
    );
    return reservationView(r, allocations);
  }
}

interface BalanceKey {
  itemId: string;
  facilityId: string;
  locationId: string;
  lotId: string | null;
  statusId: string;
}

interface BalanceKeyRow {
  item_id: string;
  location_id: string;
  lot_id: string | null;
  status_id: string;
  qty_on_hand: string;
}

/** The key of a balance (item, location, lot, status) as one string; sorts like the database's key order. */
export const balanceKey = (k: { itemId: string; locationId: string; lotId: string | null; statusId: string }) =>
  [k.itemId, k.locationId, k.lotId ?? '', k.statusId].join('|');

interface AllocationPlan {
  balanceId: string;
  locationId: string;
  lotId: string | null;
  qty: Decimal;
  key: string;
  /** Where a shortage of this pin points in the request. */
  field: string;
}

/** open → allocated when everything not yet fulfilled is allocated; fulfilled when everything is. */
export function statusOf(qty: Decimal, allocated: Decimal, fulfilled: Decimal): 'open' | 'allocated' | 'fulfilled' {
  if (fulfilled.greaterThanOrEqualTo(qty)) return 'fulfilled';
  if (allocated.plus(fulfilled).greaterThanOrEqualTo(qty) && allocated.gt(0)) return 'allocated';
  return 'open';
}

