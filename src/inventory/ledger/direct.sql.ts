import { Injectable, Optional } from '@nestjs/common';
import { timeOrderedId } from '../../common/ids';
import { DB_UUID_PATTERN } from '../../common/uuid';
import { empty, raw, Sql, sql } from '../../database/sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { nextNumberSql, numberRangeSql, numberText } from '../../documents/numbering.sql';
import { CatalogRefs } from '../../documents/references.sql';
import { sql as decimalText } from '../../documents/quantity';
import { Settings } from '../../config/settings';
import { isoText, postingEventsCte } from '../../events/events.sql';
import { Metrics } from '../../metrics/metrics';
import { COUNTER_CONSTRAINTS, NO_LOT } from './counters.sql';
import { LAPSED, lapsedAt } from './lapsed.sql';
import { Ending, isIssue, Posting, PostingLine } from './posting';
import { PostingFacts } from './posting-facts';
import { Batched, PostingBatches } from './posting-batches';
import { PostingLines, ResolvedLine } from './posting-lines';
import { LineRow, TransactionRow, transactionView, TransactionView } from './views';

/** A direct posting's row as its statement returns it. */
export type DirectRow = TransactionRow & { item_id: string; location_id: string; status_id: string };

/** A direct posting on its way: what its statement writes (`id`: the transaction's). */
export interface Member extends Batched<Member, DirectRow> {
  line: ResolvedLine;
  qty: string;
  head: Header;
  lineRow: LineRow;
  view: false | (() => object);
}
type Header = { id: string; type: string; postedBy: string; reason: string | null; sourceType: string | null; sourceId: string | null };

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
 * (counter rows created, a hold released). A line whose facts are not known yet has them read first
 * (`plan`); one the rules refuse goes the full way from the start (its error then comes from fresh
 * data). The CHECK constraints on the counters remain the last word under concurrency (a lost race is run
 * again the same way).
 */
@Injectable()
export class DirectPostings {
  private readonly enabled: boolean;
  private readonly events: boolean;
  private readonly batching: boolean;
  private readonly batches: PostingBatches<Member, DirectRow>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly lines: PostingLines,
    private readonly facts: PostingFacts,
    private readonly refs: CatalogRefs,
    @Optional() private readonly metrics?: Metrics,
    @Optional() settings?: Settings,
  ) {
    this.enabled = settings?.LEDGER_DIRECT_POSTINGS ?? true;
    this.events = settings?.LEDGER_EVENTS ?? true;
    this.batching = settings?.LEDGER_BATCHES ?? true;
    this.batches = new PostingBatches<Member, DirectRow>(
      settings?.LEDGER_BATCH_MAX ?? 32,
      {
        statement: (tenant, [m, ...more]) => (more.length ? directBatch(tenant, [m, ...more]) : direct(tenant, m.line, m.qty, m.head, m.view)),
        races: COUNTER_CONSTRAINTS,
        onBatch: (size, written) => metrics?.directBatch(size, written),
      },
      (n) => metrics?.directBatchWaiting(n),
    );
  }

  /**
   * The direct way's plan for `posting` (on the first attempt of its unit of work, nothing after it), or
   * undefined. When this process does not know the line's facts yet (a cold process, or more items than
   * PostingFacts keeps), it reads them first, with the statuses the line's balances exist in, in a read of
   * its own before the unit of work's transaction opens (UnitOfWork.readAhead): the posting's statement can
   * still be that whole transaction and join its tenant's batch, instead of going the full way (which holds
   * the tenant's TX number row through its own flush). Unknown or refused references, and a balance that does
   * not exist yet, go the full way (its exact error; the counter rows it creates).
   */
  async plan(posting: Posting, ending: Ending): Promise<DirectPlan | undefined> {
    const line = this.candidate(posting, ending);
    if (!line) return undefined;
    const tenantId = this.uow.tenantId;
    let refs = this.facts.lookup(tenantId, line.itemId, line.locationId);
    /** Just read: the statuses of the balances of the line's item and location (without a lot). */
    let balances: string[] | undefined;
    if (!refs) {
      const statuses = sql`(SELECT coalesce(array_agg(b.status_id), '{}') FROM balances b
          WHERE b.tenant_id = ${tenantId} AND b.item_id = ${line.itemId} AND b.location_id = ${line.locationId} AND b.lot_key = ${raw(`'${NO_LOT}'::uuid`)}) AS "balances"`;
      const found = await this.uow.readAhead(() => this.refs.facts(line.itemId, { locationId: line.locationId }, statuses));
      if (!found.item || !found.location) return undefined;
      refs = { items: new Map([[found.item.id, found.item]]), locations: new Map([[found.location.id, found.location]]), statuses: found.statuses };
      this.facts.remember(tenantId, refs);
      balances = found.row.balances as string[];
    }
    try {
      const checked = this.lines.checkLine(line, refs, posting.startsWork ? 'new' : 'committed');
      // The one statement writes only to an existing balance: a new one goes the full way, which creates it.
      if (balances && !balances.includes(checked.status.id)) return undefined;
      return checked.qty.isFinite() && !checked.serialNos.length ? { posting, line: checked } : undefined;
    } catch {
      return undefined; // refused on what was known: the full way says so with fresh facts
    }
  }

  /** The line of a posting of the direct way's shape (one free line, no lot or serials, ids as the database prints them), or undefined. */
  private candidate(posting: Posting, ending: Ending): PostingLine | undefined {
    if (!this.enabled || !ending.last || posting.lines.length !== 1 || !this.uow.optimistic) return undefined;
    const [line] = posting.lines;
    if (isIssue(line) || line.lotId || line.lotNo || line.expiryDate || line.serialNos?.length || line.pickSerials) return undefined;
    // Ids as the database prints them (the full way compares them as strings); anything else goes the full way.
    if (!DB_UUID_PATTERN.test(line.itemId) || !DB_UUID_PATTERN.test(line.locationId) || (line.statusId != null && !DB_UUID_PATTERN.test(line.statusId))) return undefined;
    return line;
  }

  /**
   * Posts `plan` the direct way. While a posting of the same tenant is in flight in this process, it
   * joins the tenant's next batch instead of queueing on the tenant's TX number row by itself
   * (PostingBatches); alone, it is one statement as before.
   */
  async post(plan: DirectPlan): Promise<TransactionView> {
    const member = this.member(plan);
    return this.answer(member, await this.batches.write(this.uow, member, this.batching));
  }

  /** A posting's rows, its answer, its id, and its events' view. */
  private member({ posting, line }: DirectPlan): Member {
    const id = timeOrderedId();
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
    return { id, line, qty, head, lineRow, view: this.events && view };
  }

  private answer(m: Member, header: DirectRow): TransactionView {
    this.metrics?.posted(m.head.type, 'direct');
    return transactionView(header, [{ ...m.lineRow, item_id: header.item_id, location_id: header.location_id, status_id: header.status_id }]);
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
  header: Header,
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

/**
 * The direct way for a batch of postings (`members`, two or more, in arrival order: `ord`), each checked
 * as `direct` checks one, in one statement. Every row is probed by its key, each in a lateral subquery that
 * the planner cannot turn into a scan of the tenant's rows whatever the statistics say (a locking one, or
 * `OFFSET 0`); lapsed holds are read once (`lapsed_at`). Its balances, then its positions, are locked first,
 * one at a time in the ledger's lock order (`lb`, `lp`, each lateral lock driven by its keys in that
 * order: FOR UPDATE returns each row as the last committed change left it, so a
 * batch sent while the one before it is still committing checks against that one's result, not against
 * its own older snapshot). Then the members' versions and stock conditions, each against the stock the
 * members before it leave (running sums per balance and per position, in `ord`), and written only when
 * every member passes (`whole`): the counters (each balance and position once, by the sum of its members),
 * one range of TX numbers taken last (member `ord` gets the range's `ord`-th number: commit order within
 * the range is arrival order), the headers, the lines, and each member's events in `ord` order (its
 * stock.changed with the quantities after that member). When a member fails, nothing at all is written and
 * no row comes back (the locks are released at the COMMIT that follows).
 */
export const directBatch = (tenantId: string, members: Member[]): Sql => {
  const n = members.length;
  const col = <T>(f: (m: Member) => T) => members.map(f);
  const views = col((m) => (m.view ? JSON.stringify(m.view()) : null));
  return sql`WITH x AS (
  SELECT * FROM unnest(${col((m) => m.head.id)}::uuid[], ${col((m) => m.line.item.id)}::uuid[], ${col((m) => m.line.item.version)}::int[],
                       ${col((m) => m.line.location.id)}::uuid[], ${col((m) => m.line.location.version)}::int[],
                       ${col((m) => m.line.location.facilityId)}::uuid[], ${col((m) => m.line.location.facilityVersion)}::int[],
                       ${col((m) => m.line.status.id)}::uuid[], ${col((m) => m.qty)}::numeric[], ${col((m) => m.head.type)}::text[],
                       ${col((m) => m.head.postedBy)}::text[], ${col((m) => m.head.reason)}::text[], ${col((m) => m.head.sourceType)}::text[],
                       ${col((m) => m.head.sourceId)}::uuid[], ${views}::jsonb[])
         WITH ORDINALITY AS x(id, item_id, item_version, location_id, location_version, facility_id, facility_version, status_id, qty, type,
                              posted_by, reason, source_type, source_id, view, ord)),
k AS (
  SELECT x.*, st.is_available
    FROM x
   CROSS JOIN LATERAL (SELECT 1 FROM items i WHERE i.tenant_id = ${tenantId} AND i.id = x.item_id AND i.version = x.item_version FOR KEY SHARE) i
   CROSS JOIN LATERAL (
     SELECT st.is_available
       FROM locations loc
       JOIN facilities f ON f.tenant_id = ${tenantId} AND f.id = x.facility_id AND f.version = x.facility_version
       JOIN stock_statuses st ON st.tenant_id = ${tenantId} AND st.id = x.status_id
      WHERE loc.tenant_id = ${tenantId} AND loc.id = x.location_id AND loc.version = x.location_version AND loc.facility_id = x.facility_id
     OFFSET 0) st),
${lapsedAt(tenantId)},
lb AS MATERIALIZED (
  SELECT b.*
    FROM (SELECT DISTINCT k.item_id, k.location_id, k.status_id FROM k ORDER BY k.item_id, k.location_id, k.status_id) kk
   CROSS JOIN LATERAL (
     SELECT b.id, b.item_id, b.location_id, b.status_id, b.qty_on_hand, b.qty_allocated
       FROM balances b
      WHERE b.tenant_id = ${tenantId} AND b.item_id = kk.item_id AND b.location_id = kk.location_id
        AND b.lot_key = ${raw(`'${NO_LOT}'::uuid`)} AND b.status_id = kk.status_id
        FOR UPDATE) b),
lp AS MATERIALIZED (
  SELECT p.*
    FROM (SELECT DISTINCT k.item_id, k.facility_id FROM k WHERE k.is_available AND (SELECT count(*) FROM lb) >= 0 ORDER BY k.item_id, k.facility_id) kk
   CROSS JOIN LATERAL (
     SELECT p.item_id, p.facility_id, p.qty_available_on_hand, p.qty_allocated, p.qty_reserved
       FROM inventory_positions p
      WHERE p.tenant_id = ${tenantId} AND p.item_id = kk.item_id AND p.facility_id = kk.facility_id
        FOR UPDATE) p),
kb AS (
  SELECT k.*, lb.id AS balance_id, lb.qty_on_hand, lb.qty_allocated,
         sum(k.qty) OVER (PARTITION BY lb.id ORDER BY k.ord) AS balance_run,
         lp.qty_available_on_hand AS position_on_hand, lp.qty_allocated + lp.qty_reserved AS position_held,
         sum(k.qty) FILTER (WHERE k.is_available) OVER (PARTITION BY k.item_id, k.facility_id ORDER BY k.ord) AS position_run
    FROM k JOIN lb ON lb.item_id = k.item_id AND lb.location_id = k.location_id AND lb.status_id = k.status_id
    LEFT JOIN lp ON lp.item_id = k.item_id AND lp.facility_id = k.facility_id),
ok AS MATERIALIZED (
  SELECT kb.* FROM kb
   WHERE kb.qty_on_hand + kb.balance_run >= kb.qty_allocated
     AND (NOT kb.is_available OR kb.position_on_hand + kb.position_run >= kb.position_held)
     AND (kb.qty > 0 OR NOT EXISTS (SELECT 1 FROM lapsed_at l WHERE l.item_id = kb.item_id AND l.facility_id = kb.facility_id))),
whole AS (SELECT count(*) = ${n}::int AS yes, ${n}::int AS n FROM ok),
counter_b AS (
  UPDATE balances b SET qty_on_hand = b.qty_on_hand + d.qty, updated_at = now()
    FROM (SELECT ok.balance_id, sum(ok.qty) AS qty FROM ok, whole WHERE whole.yes GROUP BY ok.balance_id) d
   WHERE b.tenant_id = ${tenantId} AND b.id = d.balance_id
  RETURNING b.id),
counter_p AS (
  UPDATE inventory_positions p SET qty_available_on_hand = p.qty_available_on_hand + d.qty, updated_at = now()
    FROM (SELECT ok.item_id, ok.facility_id, sum(ok.qty) AS qty FROM ok WHERE ok.is_available AND (SELECT count(*) FROM counter_b) > 0
           GROUP BY ok.item_id, ok.facility_id) d
   WHERE p.tenant_id = ${tenantId} AND p.item_id = d.item_id AND p.facility_id = d.facility_id
  RETURNING 1),
n AS (${numberRangeSql(tenantId, 'TX', n, '(SELECT count(*) FROM counter_p) >= 0 AND EXISTS (SELECT 1 FROM counter_b)')}),
h AS (
  INSERT INTO ledger_transactions (tenant_id, id, txn_no, type, posted_by, reason, source_type, source_id)
  SELECT ${tenantId}, ok.id, ${numberText('TX', 'n.last_value - whole.n + ok.ord')}, ok.type, ok.posted_by, ok.reason, ok.source_type, ok.source_id
    FROM n, whole, ok ORDER BY ok.ord
  RETURNING id, txn_no, type, posted_at, posted_by, reason, source_type, source_id),
l AS (
  INSERT INTO ledger_lines (tenant_id, transaction_id, line_no, item_id, facility_id, location_id, lot_id, status_id, qty_delta)
  SELECT ${tenantId}, h.id, 1, ok.item_id, ok.facility_id, ok.location_id, NULL, ok.status_id, ok.qty FROM h JOIN ok ON ok.id = h.id),
posting_events AS (
  INSERT INTO events (tenant_id, type, action, subject_type, subject_id, data)
  SELECT ${tenantId}::uuid, e.type, e.action, e.subject_type, e.subject_id, e.data FROM (
    SELECT ok.ord, 1 AS kind, 'transaction.posted' AS type, h.type AS action, 'transaction' AS subject_type, h.id AS subject_id,
           ok.view || jsonb_build_object('txnNo', h.txn_no, 'postedAt', ${isoText('h.posted_at')}) AS data
      FROM h JOIN ok ON ok.id = h.id
    UNION ALL
    SELECT ok.ord, 2, 'stock.changed', h.type, 'item', ok.item_id,
           jsonb_build_object('itemId', ok.item_id, 'facilityId', ok.facility_id, 'locationId', ok.location_id, 'lotId', NULL, 'statusId', ok.status_id,
                              'qtyDelta', ok.qty, 'qtyOnHand', ok.qty_on_hand + ok.balance_run, 'qtyAllocated', ok.qty_allocated,
                              'transactionId', h.id, 'txnNo', h.txn_no, 'transactionType', h.type)
      FROM h JOIN ok ON ok.id = h.id) e
   WHERE ${members[0].view !== false}::boolean
   ORDER BY e.ord, e.kind)
SELECT h.*, ok.item_id, ok.location_id, ok.status_id FROM h JOIN ok ON ok.id = h.id ORDER BY ok.ord`;
};
