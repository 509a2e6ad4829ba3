import { Injectable, Optional } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { constraintOf } from '../../common/errors';
import { empty, GENERIC, query, raw, Sql, sql } from '../../database/sql';
import { LostRace, UnitOfWork } from '../../database/unit-of-work';
import { nextNumberSql } from '../../documents/numbering.sql';
import { sql as decimalText } from '../../documents/quantity';
import { Settings } from '../../config/settings';
import { postingEventsCte } from '../../events/events.sql';
import { Metrics } from '../../metrics/metrics';
import { COUNTER_CONSTRAINTS, NO_LOT } from './counters.sql';
import { LAPSED } from './lapsed.sql';
import { Ending, isIssue, Posting } from './posting';
import { PostingFacts } from './posting-facts';
import { PostingLines, ResolvedLine } from './posting-lines';
import { LineRow, TransactionRow, transactionView, TransactionView } from './views';

/** A UUID as PostgreSQL prints it: lower-case. */
const DB_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type DirectRow = TransactionRow & { item_id: string; location_id: string; status_id: string };

/** A posting the direct way takes: its one line checked, in memory, by the full way's own rules. */
export interface DirectPlan {
  posting: Posting;
  line: ResolvedLine;
}

/**
 * The direct way for the commonest posting — one free line without lot or serials, nothing after it in
 * the unit of work (a stock adjustment): one statement, sent with the unit of work's opening and its
 * COMMIT, so the request costs one round trip to the database and its counter rows are locked only
 * while that statement runs and commits.
 *
 * The line's rules are the full way's (PostingLines.checkLine, the one definition), run in memory on the
 * master data the full way last looked up for this item and location (PostingFacts); the statement then
 * writes the counters, the TX number, the header and the line only when the item, the location and its
 * facility still have the versions those facts were read at, and what only the database knows holds: the
 * balance (and the position of an Available status) exists with enough stock, and no expired hold is in
 * the way of an outbound line. Otherwise it writes nothing and the unit of work runs again the full way
 * (`LostRace`), which gives the exact answer: the error with its details, or a posting that needs more
 * (counter rows created, a hold released). A line whose facts are not known yet, or which the rules
 * refuse, goes the full way from the start (its error then comes from fresh data). The CHECK constraints
 * on the counters remain the last word under concurrency (a lost race is run again the same way).
 */
@Injectable()
export class DirectPostings {
  private readonly enabled: boolean;
  private readonly events: boolean;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly lines: PostingLines,
    private readonly facts: PostingFacts,
    @Optional() private readonly metrics?: Metrics,
    @Optional() settings?: Settings,
  ) {
    this.enabled = settings?.LEDGER_DIRECT_POSTINGS ?? true;
    this.events = settings?.LEDGER_EVENTS ?? true;
  }

  /** The direct way's plan for `posting` (on the first attempt of its unit of work, nothing after it), or undefined. */
  plan(posting: Posting, ending: Ending): DirectPlan | undefined {
    if (!this.enabled || !ending.last || posting.lines.length !== 1 || !this.uow.optimistic) return undefined;
    const [line] = posting.lines;
    if (isIssue(line) || line.lotId || line.lotNo || line.expiryDate || line.serialNos?.length || line.pickSerials) return undefined;
    // Ids as the database prints them (the full way compares them as strings); anything else goes the full way.
    if (!DB_UUID.test(line.itemId) || !DB_UUID.test(line.locationId) || (line.statusId != null && !DB_UUID.test(line.statusId))) return undefined;
    const refs = this.facts.lookup(this.uow.tenantId, line.itemId, line.locationId);
    if (!refs) return undefined;
    try {
      const checked = this.lines.checkLine(line, refs, posting.startsWork ? 'new' : 'committed');
      return checked.qty.isFinite() && !checked.serialNos.length ? { posting, line: checked } : undefined;
    } catch {
      return undefined; // refused on what was known: the full way says so with fresh facts
    }
  }

  async post({ posting, line }: DirectPlan): Promise<TransactionView> {
    const id = randomUUID();
    const qty = decimalText(line.qty);
    const head = { id, type: posting.type, postedBy: this.uow.userId, reason: posting.reason ?? null, sourceType: posting.sourceType ?? null, sourceId: posting.sourceId ?? null };
    const lineRow: LineRow = {
      transaction_id: id, line_no: 1, item_id: line.item.id, location_id: line.location.id, lot_id: null, lot_no: null, status_id: line.status.id, qty_delta: qty, serial_nos: null,
    };
    // The events' view of the transaction: its answer below, but for what the statement decides (txnNo, postedAt).
    const view = () => {
      const { txnNo: _n, postedAt: _p, ...rest } = transactionView(
        { id, txn_no: '', type: head.type, posted_at: new Date(0), posted_by: head.postedBy, reason: head.reason, source_type: head.sourceType, source_id: head.sourceId },
        [lineRow],
      );
      return rest;
    };
    const statement = direct(this.uow.tenantId, line, qty, head, this.events && view);
    const send = () => query<DirectRow[]>(this.uow.manager, statement, GENERIC);
    let rows: DirectRow[];
    try {
      // Sent with the COMMIT only as the unit of work's first statement: when it writes nothing, nothing
      // at all is committed, and the unit of work may run again.
      rows = await this.uow.commitWith(send, { onlyFirst: true });
    } catch (err) {
      // Another posting changed the counters since this statement read them, leaving too little.
      const constraint = constraintOf(err);
      if (constraint && COUNTER_CONSTRAINTS.has(constraint)) throw new LostRace(`${constraint} on a direct posting`, { cause: err });
      throw err;
    }
    const [header] = rows;
    if (!header) throw new LostRace('a direct posting needs the full way');
    this.metrics?.posted(posting.type);
    return transactionView(header, [{ ...lineRow, item_id: header.item_id, location_id: header.location_id, status_id: header.status_id }]);
  }
}

/**
 * The checked line (`qty` its numeric text) and the header. `k` is the line only while its item, location
 * and facility still have the versions it was checked at; `ok` is the line when the stock conditions hold
 * too, else empty, and every write reads it (the posting's events too: none when nothing is posted).
 * Locks in the ledger's order: the item (key share, as the full way's look-ups), then the balance, the
 * position, the TX number. The balance, the position and lapsed reservations are looked up by their
 * keys as parameters (the facility: the location's at the version checked), not through `k` (a subquery
 * with a row lock, which the planner cannot flatten): on tables without statistics a generic plan
 * otherwise scanned the tenant's balances by tenant and lot alone and joined `k` afterwards, and
 * hashed every lapsed reservation of the tenant. (Exported for the benchmark's EXPLAIN of its generic
 * plan on a never-analyzed database.)
 */
export const direct = (
  tenantId: string,
  line: ResolvedLine,
  qty: string,
  header: { id: string; type: string; postedBy: string; reason: string | null; sourceType: string | null; sourceId: string | null },
  /** The events' view of the transaction; false: no events (LEDGER_EVENTS=false). */
  view: false | (() => object),
): Sql => sql`WITH k AS (
  SELECT i.id AS item_id, loc.facility_id, loc.id AS location_id, st.id AS status_id, st.is_available, ${qty}::numeric AS qty
    FROM items i
    JOIN locations loc ON loc.tenant_id = ${tenantId} AND loc.id = ${line.location.id} AND loc.version = ${line.location.version}
    JOIN facilities f ON f.tenant_id = ${tenantId} AND f.id = loc.facility_id AND f.version = ${line.location.facilityVersion}
    JOIN stock_statuses st ON st.tenant_id = ${tenantId} AND st.id = ${line.status.id}
   WHERE i.tenant_id = ${tenantId} AND i.id = ${line.item.id} AND i.version = ${line.item.version}
     FOR KEY SHARE OF i),
ok AS MATERIALIZED (
  SELECT k.*, b.id AS balance_id
    FROM k JOIN balances b ON b.tenant_id = ${tenantId} AND b.item_id = ${line.item.id} AND b.location_id = ${line.location.id}
                          AND b.lot_key = ${raw(`'${NO_LOT}'::uuid`)} AND b.status_id = ${line.status.id}
   WHERE b.qty_on_hand + k.qty >= b.qty_allocated
     AND (NOT k.is_available OR EXISTS (
           SELECT 1 FROM inventory_positions p
            WHERE p.tenant_id = ${tenantId} AND p.item_id = ${line.item.id} AND p.facility_id = ${line.location.facilityId}
              AND p.qty_available_on_hand + k.qty >= p.qty_allocated + p.qty_reserved))
     AND (k.qty > 0 OR NOT EXISTS (
           SELECT 1 FROM reservations r WHERE r.tenant_id = ${tenantId} AND r.item_id = ${line.item.id} AND r.facility_id = ${line.location.facilityId} AND ${raw(LAPSED)}))),
counter_b AS (
  UPDATE balances b SET qty_on_hand = b.qty_on_hand + ok.qty, updated_at = now()
    FROM ok WHERE b.tenant_id = ${tenantId} AND b.id = ok.balance_id
  RETURNING b.qty_on_hand, b.qty_allocated),
counter_p AS (
  UPDATE inventory_positions p SET qty_available_on_hand = p.qty_available_on_hand + ok.qty, updated_at = now()
    FROM ok WHERE ok.is_available AND p.tenant_id = ${tenantId} AND p.item_id = ok.item_id AND p.facility_id = ok.facility_id
     AND (SELECT count(*) FROM counter_b) > 0
  RETURNING 1),
n AS (${nextNumberSql(tenantId, 'TX', '(SELECT count(*) FROM counter_p) >= 0 AND EXISTS (SELECT 1 FROM counter_b)')}),
h AS (
  INSERT INTO ledger_transactions (tenant_id, id, txn_no, type, posted_by, reason, source_type, source_id)
  SELECT ${tenantId}, ${header.id}, n.no, ${header.type}, ${header.postedBy}, ${header.reason}, ${header.sourceType}, ${header.sourceId} FROM n
  RETURNING id, txn_no, type, posted_at, posted_by, reason, source_type, source_id),
l AS (
  INSERT INTO ledger_lines (tenant_id, transaction_id, line_no, item_id, facility_id, location_id, lot_id, status_id, qty_delta)
  SELECT ${tenantId}, h.id, 1, ok.item_id, ok.facility_id, ok.location_id, NULL, ok.status_id, ok.qty FROM h, ok)${view ? postingEventsCte(tenantId, view(), sql`SELECT ok.item_id, ok.facility_id, ok.location_id, NULL::uuid AS lot_id, ok.status_id, ok.qty AS qty_delta, 1 AS first_line, cb.qty_on_hand, cb.qty_allocated FROM ok, counter_b cb`) : empty}
SELECT h.*, ok.item_id, ok.location_id, ok.status_id FROM h, ok`;
