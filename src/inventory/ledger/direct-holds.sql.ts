import { Injectable, Optional } from '@nestjs/common';
import { timeOrderedId } from '../../common/ids';
import { DB_UUID_PATTERN } from '../../common/uuid';
import { raw, Sql, sql } from '../../database/sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { Settings } from '../../config/settings';
import { numberRangeSql, numberText } from '../../documents/numbering.sql';
import { sql as decimalText } from '../../documents/quantity';
import { CatalogRefs } from '../../documents/references.sql';
import { isoText } from '../../events/events.sql';
import { Metrics } from '../../metrics/metrics';
import { positiveQty } from './holds.sql';
import { lapsedAt, RESERVATION_NOW } from './lapsed.sql';
import { Ending, Hold } from './posting';
import { PostingFacts } from './posting-facts';
import { Batched, PostingBatches } from './posting-batches';
import { reservationView, ReservationRow } from './views';

/** A new reservation whose expiry is nearer goes the full way at once (the statement refuses one that has lapsed by the database's clock; this keeps those that are about to from costing a statement first). */
const EXPIRY_MARGIN_MS = 60_000;

/** The constraints of a position that a concurrent hold or posting can make a direct hold's write break. */
const POSITION_CONSTRAINTS = new Set(['position_not_overcommitted', 'position_counters_not_negative']);

/** A new reservation on its way: checked in memory, the row its statement writes (`id`: the reservation's). */
export interface HoldMember extends Batched<HoldMember, ReservationRow> {
  itemId: string;
  itemVersion: number;
  facilityId: string;
  facilityVersion: number;
  qty: string;
  demandType: string;
  demandId: string | null;
  demandLineId: string | null;
  expiresAt: Date | null;
  notes: string | null;
  userId: string;
  /** The route's `reservation.created` event, taken over from the unit of work (written by the statement), with the data it already knows. */
  event?: { type: string; action: string; subjectType: string; view: object };
}

/**
 * The direct way for a new reservation (POST /v1/inventory/reservations: nothing after it in the unit of
 * work): one statement, sent with the unit of work's opening and its COMMIT, and batched with the tenant's
 * other new reservations in flight (PostingBatches: one RS number range, one COMMIT, one flush for all).
 *
 * The hold's rules are the full way's (CatalogRefs.stockItem and checkFacility, positiveQty), run in
 * memory on the item and facility as last looked up (PostingFacts; read first when unknown: `plan`);
 * the statement writes only while their rows still have those versions and while what only the database
 * knows holds: the position exists with enough available-to-promise for this hold and the batch's holds
 * before it, and no expired hold there waits to be released. Otherwise it writes nothing and each member
 * runs again the full way (Holds.reserve), which gives the exact answer (409 with its details, or a hold
 * that needs more: a position created, expired holds released). The position's CHECK constraints remain the last word.
 */
@Injectable()
export class DirectHolds {
  private readonly enabled: boolean;
  private readonly batching: boolean;
  private readonly batches: PostingBatches<HoldMember, ReservationRow>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly facts: PostingFacts,
    @Optional() metrics?: Metrics,
    @Optional() settings?: Settings,
  ) {
    this.enabled = settings?.LEDGER_DIRECT_POSTINGS ?? true;
    this.batching = settings?.LEDGER_BATCHES ?? true;
    this.batches = new PostingBatches<HoldMember, ReservationRow>(
      settings?.LEDGER_BATCH_MAX ?? 32,
      { statement: directHolds, races: POSITION_CONSTRAINTS, onBatch: (size, written) => metrics?.directBatch(size, written, 'reservation') },
      (n) => metrics?.directBatchWaiting(n, 'reservation'),
    );
  }

  /**
   * The direct way's member for `hold` (on the first attempt of its unit of work, nothing after it), or
   * undefined. When this process does not know the item's and facility's facts yet, it reads them first, with
   * whether the position exists, in a read of its own before the unit of work's transaction opens
   * (UnitOfWork.readAhead), so the reservation can still join its tenant's batch; a new position goes the
   * full way (it creates it).
   */
  async plan(hold: Hold, ending: Ending): Promise<HoldMember | undefined> {
    if (!this.candidate(hold, ending)) return undefined;
    const tenantId = this.uow.tenantId;
    let known = this.facts.forHold(tenantId, hold.itemId, hold.facilityId);
    if (!known) {
      const position = sql`EXISTS (SELECT 1 FROM inventory_positions p
          WHERE p.tenant_id = ${tenantId} AND p.item_id = ${hold.itemId} AND p.facility_id = ${hold.facilityId}) AS "positionExists"`;
      const { item, facility, row } = await this.uow.readAhead(() => this.refs.facts(hold.itemId, { facilityId: hold.facilityId }, position));
      if (!item || !facility) return undefined;
      this.facts.rememberHold(tenantId, item, facility);
      if (!row.positionExists) return undefined;
      known = { item, facility };
    }
    try {
      const field = hold.field ?? '';
      const item = this.refs.stockItem(new Map([[known.item.id, known.item]]), hold.itemId, field, 'new');
      this.refs.checkFacility(known.facility, field, 'new');
      const qty = positiveQty(hold.qty, item, field);
      const member: HoldMember = {
        id: timeOrderedId(), itemId: item.id, itemVersion: item.version, facilityId: known.facility.id, facilityVersion: known.facility.version,
        qty: decimalText(qty), demandType: hold.demandType ?? 'manual', demandId: hold.demandId ?? null, demandLineId: hold.demandLineId ?? null,
        expiresAt: hold.expiresAt ?? null, notes: hold.notes ?? null, userId: this.uow.userId,
      };
      // The route's resource event, written by the statement when nothing else follows the handler (then the
      // statement is the unit of work's whole transaction, and may ride in a batch); else after it, as usual.
      const view = eventView(member);
      // Taken last: nothing after it can fail and leave the event unwritten by either side.
      const event = this.uow.takeResourceEvent();
      if (event) member.event = { ...event, view };
      return member;
    } catch {
      return undefined; // refused on what was known: the full way says so with fresh facts
    }
  }

  /** Whether a hold has the direct way's shape (ids as the database prints them, an expiry not too close). */
  private candidate(hold: Hold, ending: Ending): boolean {
    if (!this.enabled || !ending.last || !this.uow.optimistic) return false;
    // Ids as the database prints them (the answer and the event echo them); anything else goes the full way.
    if (![hold.itemId, hold.facilityId, hold.demandId, hold.demandLineId].every((id) => id == null || DB_UUID_PATTERN.test(id))) return false;
    return !hold.expiresAt || hold.expiresAt.getTime() > Date.now() + EXPIRY_MARGIN_MS;
  }

  /** Writes the planned reservation, alone or in its tenant's next batch; a `LostRace` sends its unit of work the full way. */
  reserve(member: HoldMember): Promise<ReservationRow> {
    return this.batches.write(this.uow, member, this.batching);
  }
}

/** A new reservation as its GET shows it, but for what the statement decides (reservationNo, createdAt, updatedAt). */
function eventView(m: HoldMember): object {
  const row: ReservationRow = {
    id: m.id, reservation_no: '', item_id: m.itemId, facility_id: m.facilityId, qty: m.qty, qty_allocated: '0', qty_fulfilled: '0', status: 'open',
    demand_type: m.demandType, demand_id: m.demandId, demand_line_id: m.demandLineId, expires_at: m.expiresAt, notes: m.notes, version: 1,
    created_by: m.userId, updated_by: m.userId, created_at: new Date(0), updated_at: new Date(0),
  };
  const { reservationNo: _n, createdAt: _c, updatedAt: _u, ...rest } = JSON.parse(JSON.stringify(reservationView(row, []))) as Record<string, unknown>;
  return rest;
}

/**
 * New reservations (`members`, in arrival order: `ord`) in one statement. The item (key share, as the full
 * way's look-up) and the facility at the versions checked; then their positions, locked one at a time in
 * the ledger's lock order (FOR UPDATE returns each as the last committed change left it). Every row is
 * probed by its key, each in a lateral subquery that the planner cannot turn into a scan of the tenant's
 * rows whatever the statistics say (a locking one, or `OFFSET 0`); lapsed holds are read once
 * (`lapsed_at`). Each member's hold is checked against its position's available-to-promise less the holds
 * of the members before it (a running sum per position), with no lapsed hold at the position, and written
 * only when every member passes (`whole`): each position's reserved quantity once, by the sum of its
 * members, then one range of RS numbers taken last (member `ord` gets the range's `ord`-th number), then
 * the rows, then the `reservation.created` event of each member that took it over (its data: its answer).
 * When a member fails, nothing at all is written and no row comes back.
 */
export const directHolds = (tenantId: string, members: HoldMember[]): Sql => {
  const n = members.length;
  const col = <T>(f: (m: HoldMember) => T) => members.map(f);
  return sql`WITH x AS (
  SELECT * FROM unnest(${col((m) => m.id)}::uuid[], ${col((m) => m.itemId)}::uuid[], ${col((m) => m.itemVersion)}::int[],
                       ${col((m) => m.facilityId)}::uuid[], ${col((m) => m.facilityVersion)}::int[], ${col((m) => m.qty)}::numeric[],
                       ${col((m) => m.demandType)}::text[], ${col((m) => m.demandId)}::uuid[], ${col((m) => m.demandLineId)}::uuid[],
                       ${col((m) => m.expiresAt)}::timestamptz[], ${col((m) => m.notes)}::text[], ${col((m) => m.userId)}::text[],
                       ${col((m) => m.event?.type ?? null)}::text[], ${col((m) => m.event?.action ?? null)}::text[], ${col((m) => m.event?.subjectType ?? null)}::text[],
                       ${col((m) => (m.event ? JSON.stringify(m.event.view) : null))}::jsonb[])
         WITH ORDINALITY AS x(id, item_id, item_version, facility_id, facility_version, qty, demand_type, demand_id, demand_line_id, expires_at, notes, user_id,
                              event_type, event_action, subject_type, view, ord)),
k AS (
  SELECT x.*
    FROM x
   CROSS JOIN LATERAL (SELECT 1 FROM items i WHERE i.tenant_id = ${tenantId} AND i.id = x.item_id AND i.version = x.item_version FOR KEY SHARE) i
   CROSS JOIN LATERAL (SELECT 1 FROM facilities f WHERE f.tenant_id = ${tenantId} AND f.id = x.facility_id AND f.version = x.facility_version OFFSET 0) f
   -- by the database's clock too: a hold that would lapse at once goes the full way (which releases it)
   WHERE x.expires_at IS NULL OR x.expires_at > now()),
${lapsedAt(tenantId)},
lp AS MATERIALIZED (
  SELECT p.*
    FROM (SELECT DISTINCT k.item_id, k.facility_id FROM k ORDER BY k.item_id, k.facility_id) kk
   CROSS JOIN LATERAL (
     SELECT p.item_id, p.facility_id, p.qty_available_on_hand - p.qty_allocated - p.qty_reserved AS atp
       FROM inventory_positions p
      WHERE p.tenant_id = ${tenantId} AND p.item_id = kk.item_id AND p.facility_id = kk.facility_id
        FOR UPDATE) p),
kp AS (
  SELECT k.*, lp.atp, sum(k.qty) OVER (PARTITION BY k.item_id, k.facility_id ORDER BY k.ord) AS run
    FROM k JOIN lp ON lp.item_id = k.item_id AND lp.facility_id = k.facility_id),
ok AS MATERIALIZED (
  SELECT kp.* FROM kp
   WHERE kp.run <= kp.atp
     AND NOT EXISTS (SELECT 1 FROM lapsed_at l WHERE l.item_id = kp.item_id AND l.facility_id = kp.facility_id)),
whole AS (SELECT count(*) = ${n}::int AS yes, ${n}::int AS n FROM ok),
counter_p AS (
  UPDATE inventory_positions p SET qty_reserved = p.qty_reserved + d.qty, updated_at = now()
    FROM (SELECT ok.item_id, ok.facility_id, sum(ok.qty) AS qty FROM ok, whole WHERE whole.yes GROUP BY ok.item_id, ok.facility_id) d
   WHERE p.tenant_id = ${tenantId} AND p.item_id = d.item_id AND p.facility_id = d.facility_id
  RETURNING 1),
n AS (${numberRangeSql(tenantId, 'RS', n, 'EXISTS (SELECT 1 FROM counter_p)')}),
r AS (
  INSERT INTO reservations (tenant_id, id, reservation_no, item_id, facility_id, qty, status, demand_type, demand_id, demand_line_id,
                            expires_at, notes, created_by, updated_by)
  SELECT ${tenantId}, ok.id, ${numberText('RS', 'n.last_value - whole.n + ok.ord')}, ok.item_id, ok.facility_id, ok.qty, 'open', ok.demand_type,
         ok.demand_id, ok.demand_line_id, ok.expires_at, ok.notes, ok.user_id, ok.user_id
    FROM n, whole, ok ORDER BY ok.ord
  RETURNING *),
created_events AS (
  INSERT INTO events (tenant_id, type, action, subject_type, subject_id, data)
  SELECT ${tenantId}::uuid, ok.event_type, ok.event_action, ok.subject_type, r.id,
         ok.view || jsonb_build_object('reservationNo', r.reservation_no, 'createdAt', ${isoText('r.created_at')}, 'updatedAt', ${isoText('r.updated_at')})
    FROM r JOIN ok ON ok.id = r.id
   WHERE ok.event_type IS NOT NULL
   ORDER BY ok.ord)
SELECT ${raw(RESERVATION_NOW)} FROM r`;
};
