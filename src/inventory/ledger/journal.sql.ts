import { Injectable, Optional } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { notFound } from '../../common/errors';
import { Metrics } from '../../metrics/metrics';
import { UnitOfWork } from '../../database/unit-of-work';
import { GENERIC, prepared } from '../../database/prepared';
import { nextNumberSql } from '../../documents/numbering.sql';
import { sql } from '../../documents/quantity';
import { AFTER_COUNTERS, CounterWrite } from './counters.sql';
import { Posting } from './posting';
import { ResolvedLine } from './posting-lines';
import { LineRow, TransactionRow, transactionView, TransactionView } from './views';

const LINE_COLUMNS = `l.transaction_id, l.line_no, l.item_id, l.location_id, l.lot_id, t.lot_no, l.status_id, l.qty_delta, l.serial_nos`;

/** The journal: ledger transactions and their lines, append-only. Writes one posting; reads them back. */
@Injectable()
export class Journal {
  constructor(
    private readonly uow: UnitOfWork,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  private get m() {
    return this.uow.manager;
  }

  /**
   * Header and lines (numbered 1..n in the given order) of one posting, in one statement that also takes
   * the TX number (the tenant's number counter is locked only from here to COMMIT) and writes the
   * posting's checked `counters`.
   */
  async write(posting: Posting, lines: ResolvedLine[], counters?: CounterWrite): Promise<TransactionView> {
    const id = randomUUID();
    const rows: LineRow[] = lines.map((l, i) => ({
      transaction_id: id,
      line_no: i + 1,
      item_id: l.item.id,
      location_id: l.location.id,
      lot_id: l.lot?.id ?? null,
      lot_no: l.lot?.lotNo ?? null,
      status_id: l.status.id,
      qty_delta: sql(l.qty),
      serial_nos: l.serialNos.length ? l.serialNos : null,
    }));
    const [header]: TransactionRow[] = await this.m.query(
      prepared(`WITH ${counters ? `${counters.sql(15)}, ` : ''}n AS (${nextNumberSql('TX', counters && AFTER_COUNTERS)}),
       h AS (
         INSERT INTO ledger_transactions (tenant_id, id, txn_no, type, posted_by, reason, source_type, source_id)
         SELECT $1, $2, n.no, $3, $4, $5, $6, $7 FROM n
         RETURNING id, txn_no, type, posted_at, posted_by, reason, source_type, source_id),
       l AS (
         INSERT INTO ledger_lines (tenant_id, transaction_id, line_no, item_id, facility_id, location_id, lot_id, status_id, qty_delta, serial_nos)
         SELECT $1, h.id, k.line_no, k.item_id, k.facility_id, k.location_id, k.lot_id, k.status_id, k.qty_delta,
                NULLIF(string_to_array(k.serials, E'\\x1f'), '{}')
           FROM h, unnest($8::int[], $9::uuid[], $10::uuid[], $11::uuid[], $12::uuid[], $13::uuid[], $14::numeric[], $15::text[])
                AS k(line_no, item_id, facility_id, location_id, lot_id, status_id, qty_delta, serials))
       SELECT * FROM h`, GENERIC),
      [
        this.uow.tenantId,
        id,
        posting.type,
        this.uow.userId,
        posting.reason ?? null,
        posting.sourceType ?? null,
        posting.sourceId ?? null,
        rows.map((r) => r.line_no),
        rows.map((r) => r.item_id),
        lines.map((l) => l.location.facilityId),
        rows.map((r) => r.location_id),
        rows.map((r) => r.lot_id),
        rows.map((r) => r.status_id),
        rows.map((r) => r.qty_delta),
        lines.map((l) => l.serialNos.join('\x1f')),
        ...(counters?.params ?? []),
      ],
    );
    this.metrics?.posted(posting.type);
    return transactionView(header, rows);
  }

  async transaction(id: string): Promise<TransactionView> {
    const [header]: TransactionRow[] = await this.m.query(
      prepared(`SELECT id, txn_no, type, posted_at, posted_by, reason, source_type, source_id FROM ledger_transactions WHERE tenant_id = $1 AND id = $2`, GENERIC),
      [this.uow.tenantId, id],
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
    return this.m.query(
      prepared(`SELECT ${LINE_COLUMNS} FROM ledger_lines l
         LEFT JOIN lots t ON t.tenant_id = l.tenant_id AND t.id = l.lot_id
        WHERE l.tenant_id = $1 AND l.transaction_id = ANY($2::uuid[]) ORDER BY l.transaction_id, l.line_no`, GENERIC),
      [this.uow.tenantId, transactionIds],
    );
  }
}
