import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { invalidField, invalidState } from '../../common/errors';
import { page } from '../../common/pagination';
import { SqlFilters } from '../../database/filters.sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { auditView, DocumentRow, DocumentStore, Transitions } from '../../documents/document-store';
import { DocumentNumbers } from '../../documents/numbering.sql';
import { num, numOrNull, qty as toQty, sql } from '../../documents/quantity';
import { CatalogRefs } from '../../documents/references.sql';
import { checkLot } from '../../documents/tracking';
import { UomConversion } from '../../documents/uom-conversion.sql';
import { balanceKey } from '../ledger/counter-changes';
import { LedgerService } from '../ledger/ledger.service';
import { PostingLine } from '../ledger/posting';
import { CountLinesDto, CountSessionQuery, CountStatus, CreateCountSessionDto } from './dto/count-session.dto';

interface SessionRow extends DocumentRow {
  session_no: string;
  facility_id: string;
  notes: string | null;
  transaction_id: string | null;
  completed_at: Date | null;
}

interface CountLineRow {
  id: string;
  session_id: string;
  item_id: string;
  location_id: string;
  lot_no: string | null;
  lot_id: string | null;
  counted_qty: string;
  system_qty: string | null;
  variance_qty: string | null;
}

const sessionView = (s: SessionRow, lines: CountLineRow[]) => ({
  id: s.id,
  sessionNo: s.session_no,
  facilityId: s.facility_id,
  status: s.status as CountStatus,
  notes: s.notes,
  transactionId: s.transaction_id,
  completedAt: s.completed_at,
  lines: lines.map((l) => ({
    itemId: l.item_id,
    locationId: l.location_id,
    lotId: l.lot_id,
    lotNo: l.lot_no,
    countedQty: num(l.counted_qty),
    systemQty: numOrNull(l.system_qty),
    varianceQty: numOrNull(l.variance_qty),
  })),
  ...auditView(s),
});
export type CountSessionView = ReturnType<typeof sessionView>;

/** open → completed | cancelled; counts are taken (`count`) while open. */
export const COUNT_SESSION = new Transitions<CountStatus, 'count' | 'complete' | 'cancel'>('Count session', {
  count: { from: ['open'] },
  complete: { from: ['open'], to: 'completed' },
  cancel: { from: ['open'], to: 'cancelled' },
});

/**
 * Physical counts of a facility: open → completed (one `count` posting setting every counted
 * (item, location, lot) in the AVAILABLE status to its counted quantity) | cancelled.
 */
@Injectable()
export class CountSessionsService {
  private readonly store: DocumentStore<SessionRow, CountStatus, keyof typeof COUNT_SESSION.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly ledger: LedgerService,
    private readonly uoms: UomConversion,
    private readonly numbers: DocumentNumbers,
  ) {
    this.store = new DocumentStore(uow, 'count_sessions', COUNT_SESSION, (r) => r.session_no);
  }

  private get m() {
    return this.uow.manager;
  }

  private get tenant() {
    return this.uow.tenantId;
  }

  /** Newest first (createdAt, then id); q searches sessionNo. Lines of the page in one query. */
  async list(query: CountSessionQuery) {
    const f = new SqlFilters(this.tenant)
      .add('status = ?', query.status)
      .add('facility_id = ?', query.facilityId)
      .search(['session_no'], query.q);
    const { rows, count } = await f.pageOf<SessionRow>(this.m, `SELECT * FROM count_sessions WHERE ${f.where}`, 'created_at DESC, id DESC', query);
    const lines = await this.linesOf(rows.map((r) => r.id));
    return page(rows.map((r) => sessionView(r, lines.filter((l) => l.session_id === r.id))), count, query);
  }

  async get(id: string): Promise<CountSessionView> {
    return sessionView(await this.store.find(id), await this.linesOf([id]));
  }

  async create(dto: CreateCountSessionDto): Promise<CountSessionView> {
    await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    const id = randomUUID();
    const sessionNo = await this.numbers.next('CS');
    await this.m.query(
      `INSERT INTO count_sessions (tenant_id, id, session_no, facility_id, status, notes, created_by, updated_by)
       VALUES ($1, $2, $3, $4, 'open', $5, $6, $6)`,
      [this.tenant, id, sessionNo, dto.facilityId, dto.notes ?? null, this.uow.userId],
    );
    return this.get(id);
  }

  /** Open only. Records counts; a later count of the same (item, location, lotNo) replaces the earlier. */
  async addLines(id: string, dto: CountLinesDto, ifMatch?: number): Promise<CountSessionView> {
    const s = await this.store.lockFor('count', id, ifMatch);
    const items = await this.refs.items(dto.lines.map((l) => l.itemId));
    const locations = await this.refs.locations(dto.lines.map((l) => l.locationId));
    const lots = await this.refs.lotsByNumber(dto.lines.filter((l) => l.lotNo).map((l) => ({ itemId: l.itemId, lotNo: l.lotNo! })));
    const byKey = new Map<string, { itemId: string; locationId: string; lotNo: string | null; lotId: string | null; qty: Decimal }>();
    for (const [i, line] of dto.lines.entries()) {
      const f = `lines[${i}]`;
      const item = this.refs.stockItem(items, line.itemId, `${f}.itemId`, 'new');
      this.refs.location(locations, line.locationId, `${f}.locationId`, 'new', s.facility_id);
      if (item.serialTracked)
        throw invalidField(`${f}.itemId`, `is serial-tracked: ${item.itemNo} cannot be counted by quantity; correct its serials with adjustments`);
      checkLot(item, line, f);
      const qty = await this.uoms.toBase(item, undefined, line.countedQty, `${f}.countedQty`);
      const lotId = line.lotNo ? (lots.get(`${item.id}|${line.lotNo}`) ?? null) : null;
      // A new lot is created by the completion's posting, which cannot give it the expiry date it needs.
      if (item.expiryTracked && line.lotNo && !lotId && qty.gt(0))
        throw invalidField(`${f}.lotNo`, `is not a lot of ${item.itemNo}: a new lot of an expiry-tracked item needs an expiry date; post it with an adjustment`);
      byKey.set(`${item.id}|${line.locationId}|${line.lotNo ?? ''}`, { itemId: item.id, locationId: line.locationId, lotNo: line.lotNo ?? null, lotId, qty });
    }
    const counts = [...byKey.values()];
    await this.m.query(
      `INSERT INTO count_lines (tenant_id, id, session_id, item_id, location_id, lot_no, lot_id, counted_qty, counted_by)
       SELECT $1, k.id, $2, k.item_id, k.location_id, k.lot_no, k.lot_id, k.qty, $3
         FROM unnest($4::uuid[], $5::uuid[], $6::uuid[], $7::text[], $8::uuid[], $9::numeric[]) AS k(id, item_id, location_id, lot_no, lot_id, qty)
       ON CONFLICT ON CONSTRAINT count_lines_key DO UPDATE
          SET counted_qty = EXCLUDED.counted_qty, lot_id = EXCLUDED.lot_id, counted_by = EXCLUDED.counted_by, counted_at = now()`,
      [
        this.tenant,
        id,
        this.uow.userId,
        counts.map(() => randomUUID()),
        counts.map((c) => c.itemId),
        counts.map((c) => c.locationId),
        counts.map((c) => c.lotNo),
        counts.map((c) => c.lotId),
        counts.map((c) => sql(c.qty)),
      ],
    );
    await this.store.touch(id);
    return this.get(id);
  }

  /**
   * open → completed. Locks the AVAILABLE balances of the counted keys, takes their on hand as the
   * system quantity (0 when none), and posts one `count` transaction with a line per non-zero variance
   * (nothing when all are 0). The ledger refuses a negative variance that would break holds
   * (409 insufficient_stock): then nothing changes and the session stays open.
   */
  async complete(id: string, ifMatch?: number): Promise<CountSessionView> {
    const s = await this.store.lockFor('complete', id, ifMatch);
    const lines = await this.linesOf([id]);
    if (!lines.length) throw invalidState(`${COUNT_SESSION.what} ${s.session_no} has no counted lines; count something or cancel it`);
    // Holds that expired stop holding first, so they neither block nor deadlock the posting.
    await this.ledger.releaseExpired([...new Set(lines.map((l) => l.item_id))].map((itemId) => ({ itemId, facilityId: s.facility_id })));
    const available = this.refs.status(await this.refs.statuses(), undefined, 'statusId');
    // A lot counted as new may have been posted since: look the numbers up again.
    const lots = await this.refs.lotsByNumber(lines.filter((l) => l.lot_no).map((l) => ({ itemId: l.item_id, lotNo: l.lot_no! })));
    const keys = lines.map((l) => ({ line: l, lotId: l.lot_no ? (lots.get(`${l.item_id}|${l.lot_no}`) ?? null) : null }));
    // A lot that does not exist has no stock: nothing to lock.
    const existing = keys.filter((k) => !k.line.lot_no || k.lotId);
    const onHand = await this.ledger.lockBalances(
      existing.map((k) => ({ itemId: k.line.item_id, facilityId: s.facility_id, locationId: k.line.location_id, lotId: k.lotId, statusId: available.id })),
    );
    const results = keys.map((k) => {
      const key = balanceKey({ itemId: k.line.item_id, locationId: k.line.location_id, lotId: k.lotId, statusId: available.id });
      const system = onHand.get(key) ?? toQty(0);
      return { ...k, system, variance: toQty(k.line.counted_qty).minus(system) };
    });
    const posting: PostingLine[] = [];
    results.forEach((r, i) => {
      if (r.variance.isZero()) return;
      posting.push({
        itemId: r.line.item_id,
        locationId: r.line.location_id,
        statusId: available.id,
        lotId: r.lotId,
        lotNo: r.lotId ? null : r.line.lot_no,
        qty: r.variance,
        field: `lines[${i}]`,
        qtyField: 'countedQty',
      });
    });
    const transaction = posting.length
      ? await this.ledger.post({ type: 'count', reason: `Count session ${s.session_no}`, sourceType: 'count_session', sourceId: id, lines: posting })
      : null;
    await this.m.query(
      `UPDATE count_lines c
          SET system_qty = k.system_qty, variance_qty = k.variance_qty,
              lot_id = (SELECT t.id FROM lots t WHERE t.tenant_id = c.tenant_id AND t.item_id = c.item_id AND t.lot_no = c.lot_no)
         FROM unnest($3::uuid[], $4::numeric[], $5::numeric[]) AS k(id, system_qty, variance_qty)
        WHERE c.tenant_id = $1 AND c.session_id = $2 AND c.id = k.id`,
      [this.tenant, id, results.map((r) => r.line.id), results.map((r) => sql(r.system)), results.map((r) => sql(r.variance))],
    );
    await this.store.move(id, 'complete', 'completed_at = now(), transaction_id = $4', [transaction?.id ?? null]);
    return this.get(id);
  }

  async cancel(id: string, ifMatch?: number): Promise<CountSessionView> {
    await this.store.lockFor('cancel', id, ifMatch);
    await this.store.move(id, 'cancel');
    return this.get(id);
  }

  /** Lines ordered by item number, location path, lot number. */
  private linesOf(ids: string[]): Promise<CountLineRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.m.query(
      `SELECT c.* FROM count_lines c
         JOIN items i ON i.tenant_id = c.tenant_id AND i.id = c.item_id
         JOIN locations l ON l.tenant_id = c.tenant_id AND l.id = c.location_id
        WHERE c.tenant_id = $1 AND c.session_id = ANY($2::uuid[])
        ORDER BY c.session_id, i.item_no, l.path, c.lot_no NULLS FIRST, c.id`,
      [this.tenant, ids],
    );
  }
}
