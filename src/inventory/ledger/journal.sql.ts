import { Injectable, Optional } from '@nestjs/common';
import { timeOrderedId } from '../../common/ids';
import { notFound } from '../../common/errors';
import { Metrics } from '../../metrics/metrics';
import { UnitOfWork } from '../../database/unit-of-work';
import { empty, GENERIC, query, raw, sql } from '../../database/sql';
import { postingEventsCte } from '../../events/events.sql';
import { Settings } from '../../config/settings';
import { nextNumberSql } from '../../documents/numbering.sql';
import { sql as decimalText } from '../../documents/quantity';
import { AFTER_COUNTERS, CounterWrite, LOT_KEY } from './counters.sql';
import { Posting } from './posting';
import { ResolvedLine } from './posting-lines';
import { LineRow, TransactionRow, transactionView, TransactionView } from './views';

/** The posting's lines (CTE `l`) per balance key, with the key's `lot_key` to join balances by plain equality. */
const LINE_KEYS = `SELECT item_id, facility_id, location_id, lot_id, ${LOT_KEY('lot_id')} AS lot_key, status_id, sum(qty_delta) AS qty_delta, min(line_no) AS first_line
       FROM l GROUP BY 1, 2, 3, 4, 6`;

/**
 * The balance keys the posting changed (from the lines CTE `l`) with their quantities after the change,
 * from the statement's own counter writes (`counter_b` returns them: a key whose lines cancel out is not
 * written, so it has no stock.changed).
 */
const changesWrittenHere = () => sql`SELECT s.*, cb.qty_on_hand, cb.qty_allocated
     FROM (${raw(LINE_KEYS)}) s
     JOIN counter_b cb ON cb.item_id = s.item_id AND cb.location_id = s.location_id AND cb.lot_key = s.lot_key AND cb.status_id = s.status_id`;
/** No counters written (every key's lines cancel out): the posting changed no balance. */
const NO_CHANGES = sql`SELECT s.*, NULL::numeric AS qty_on_hand, NULL::numeric AS qty_allocated FROM (${raw(LINE_KEYS)}) s WHERE false`;

/** The transaction's answer (transactionView) without what the header statement decides: txnNo, postedAt. */
const eventView = (id: string, posting: Posting, postedBy: string, rows: LineRow[]) => {
  const { txnNo: _n, postedAt: _p, ...view } = transactionView(
    { id, txn_no: '', type: posting.type, posted_at: new Date(0), posted_by: postedBy, reason: posting.reason ?? null, source_type: posting.sourceType ?? null, source_id: posting.sourceId ?? null },
    rows,
  );
  return view;
};

const LINE_COLUMNS = `l.transaction_id, l.line_no, l.item_id, l.location_id, l.lot_id, t.lot_no, l.status_id, l.qty_delta, l.serial_nos`;

/** The journal: ledger transactions and their lines, append-only. Writes one posting; reads them back. */
@Injectable()
export class Journal {
  private readonly events: boolean;

  constructor(
    private readonly uow: UnitOfWork,
    @Optional() private readonly metrics?: Metrics,
    @Optional() settings?: Settings,
  ) {
    this.events = settings?.LEDGER_EVENTS ?? true;
  }

  private get m() {
    return this.uow.manager;
  }

  /**
   * Header and lines (numbered 1..n in the given order) of one posting, in one statement that also takes
   * the TX number (the tenant's number counter is locked only from here to COMMIT) and writes the
   * posting's checked `counters`.
   */
  async write(posting: Posting, lines: ResolvedLine[], counters?: CounterWrite): Promise<TransactionView> {
    const id = timeOrderedId();
    const rows: LineRow[] = lines.map((l, i) => ({
      transaction_id: id,
      line_no: i + 1,
      item_id: l.item.id,
      location_id: l.location.id,
      lot_id: l.lot?.id ?? null,
      lot_no: l.lot?.lotNo ?? null,
      status_id: l.status.id,
      qty_delta: decimalText(l.qty),
      serial_nos: l.serialNos.length ? l.serialNos : null,
    }));
    const tenant = this.uow.tenantId;
    const [header]: TransactionRow[] = await query(
      this.m,
      sql`WITH ${counters ? sql`${counters.ctes}, ` : empty}n AS (${nextNumberSql(tenant, 'TX', counters && AFTER_COUNTERS)}),
       h AS (
         INSERT INTO ledger_transactions (tenant_id, id, txn_no, type, posted_by, reason, source_type, source_id)
         SELECT ${tenant}, ${id}, n.no, ${posting.type}, ${this.uow.userId}, ${posting.reason ?? null}, ${posting.sourceType ?? null}, ${posting.sourceId ?? null} FROM n
         RETURNING id, txn_no, type, posted_at, posted_by, reason, source_type, source_id),
       l AS (
         INSERT INTO ledger_lines (tenant_id, transaction_id, line_no, item_id, facility_id, location_id, lot_id, status_id, qty_delta, serial_nos)
         SELECT ${tenant}, h.id, k.line_no, k.item_id, k.facility_id, k.location_id, k.lot_id, k.status_id, k.qty_delta,
                NULLIF(string_to_array(k.serials, E'\\x1f'), '{}')
           FROM h, unnest(${rows.map((r) => r.line_no)}::int[], ${rows.map((r) => r.item_id)}::uuid[], ${lines.map((l) => l.location.facilityId)}::uuid[],
                          ${rows.map((r) => r.location_id)}::uuid[], ${rows.map((r) => r.lot_id)}::uuid[], ${rows.map((r) => r.status_id)}::uuid[],
                          ${rows.map((r) => r.qty_delta)}::numeric[], ${lines.map((l) => l.serialNos.join('\x1f'))}::text[])
                AS k(line_no, item_id, facility_id, location_id, lot_id, status_id, qty_delta, serials)
         RETURNING line_no, item_id, facility_id, location_id, lot_id, status_id, qty_delta)${this.events
           ? postingEventsCte(tenant, eventView(id, posting, this.uow.userId, rows), counters ? changesWrittenHere() : NO_CHANGES)
           : empty}
       SELECT * FROM h`,
      GENERIC,
    );
    this.metrics?.posted(posting.type, 'full');
    return transactionView(header, rows);
  }

  async transaction(id: string): Promise<TransactionView> {
    const [header]: TransactionRow[] = await query(
      this.m,
      sql`SELECT id, txn_no, type, posted_at, posted_by, reason, source_type, source_id FROM ledger_transactions WHERE tenant_id = ${this.uow.tenantId} AND id = ${id}`,
      GENERIC,
    );
    if (!header) throw notFound('Transaction');
    return transactionView(header, await this.lines([id]));
  }

  /** Views of transaction headers with all their lines: one query for the lines of them all. */
  async views(headers: TransactionRow[]): Promise<TransactionView[]> {
    const lines = await this.lines(headers.map((h) => h.id));
    return headers.map((h) => transactionView(h, lines.filter((l) => l.transaction_id === h.id)));
  }

  private lines(transactionIds: string[]): Promise<LineRow[]> {
    if (!transactionIds.length) return Promise.resolve([]);
    return query(
      this.m,
      sql`SELECT ${raw(LINE_COLUMNS)} FROM ledger_lines l
         LEFT JOIN lots t ON t.tenant_id = l.tenant_id AND t.id = l.lot_id
        WHERE l.tenant_id = ${this.uow.tenantId} AND l.transaction_id = ANY(${transactionIds}::uuid[]) ORDER BY l.transaction_id, l.line_no`,
      GENERIC,
    );
  }
}
