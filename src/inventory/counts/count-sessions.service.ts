import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { invalidField, invalidState } from '../../common/errors';
import { Item } from '../../catalog/items/item.entity';
import { Location } from '../../catalog/locations/location.entity';
import { documentAudit } from '../../common/entity';
import { likePattern, page } from '../../common/pagination';
import { UnitOfWork } from '../../database/unit-of-work';
import { DocumentStore, Transitions } from '../../documents/document-store';
import { DocumentNumbers } from '../../documents/numbering.sql';
import { num, numOrNull, qty as toQty } from '../../documents/quantity';
import { CatalogRefs } from '../../documents/references.sql';
import { checkLot } from '../../documents/tracking';
import { UomConversion } from '../../documents/uom-conversion.sql';
import { balanceKey } from '../ledger/counter-changes';
import { LedgerService } from '../ledger/ledger.service';
import { PostingLine } from '../ledger/posting';
import { CountLine, CountSession } from './count-session.entity';
import { NewCount, recordResults, upsertCounts } from './count-sessions.sql';
import { CountLinesDto, CountSessionQuery, CountStatus, CreateCountSessionDto } from './dto/count-session.dto';
import { cursorOf, newestFirst } from '../../common/cursor';
import { keysetPageOf } from '../../database/keyset-page';

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const COUNT_SESSIONS = newestFirst('count-sessions', 's');

const sessionView = (s: CountSession, lines: CountLine[]) => ({
  id: s.id,
  sessionNo: s.sessionNo,
  facilityId: s.facilityId,
  status: s.status as CountStatus,
  notes: s.notes,
  transactionId: s.transactionId,
  completedAt: s.completedAt,
  lines: lines.map((l) => ({
    itemId: l.itemId,
    locationId: l.locationId,
    lotId: l.lotId,
    lotNo: l.lotNo,
    countedQty: num(l.countedQty),
    systemQty: numOrNull(l.systemQty),
    varianceQty: numOrNull(l.varianceQty),
  })),
  ...documentAudit(s),
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
  private readonly store: DocumentStore<CountSession, CountStatus, keyof typeof COUNT_SESSION.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly ledger: LedgerService,
    private readonly uoms: UomConversion,
    private readonly numbers: DocumentNumbers,
  ) {
    this.store = new DocumentStore(uow, CountSession, COUNT_SESSION, (s) => s.sessionNo);
  }

  /** Newest first (createdAt, then id); q searches sessionNo. Lines of the page in one query. */
  async list(query: CountSessionQuery) {
    const at = cursorOf(COUNT_SESSIONS, query);
    const qb = this.store.repository.createQueryBuilder('s');
    if (query.status) qb.where('s.status = :status', { status: query.status });
    if (query.facilityId) qb.where('s.facilityId = :facilityId', { facilityId: query.facilityId });
    if (query.q) qb.where('s.sessionNo ILIKE :q', { q: likePattern(query.q) });
    const { rows, count, nextCursor } = await keysetPageOf(qb, COUNT_SESSIONS, query, at);
    const lines = await this.linesOf(rows.map((s) => s.id));
    return page(rows.map((s) => sessionView(s, lines.filter((l) => l.sessionId === s.id))), count, query, nextCursor);
  }

  async get(id: string): Promise<CountSessionView> {
    return sessionView(await this.store.find(id), await this.linesOf([id]));
  }

  async create(dto: CreateCountSessionDto): Promise<CountSessionView> {
    await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    const id = randomUUID();
    const sessionNo = await this.numbers.next('CS');
    await this.store.repository.insert({
      id, sessionNo, facilityId: dto.facilityId, status: 'open', notes: dto.notes ?? null, createdBy: this.uow.userId, updatedBy: this.uow.userId,
    });
    return this.get(id);
  }

  /** Open only. Records counts; a later count of the same (item, location, lotNo) replaces the earlier. */
  async addLines(id: string, dto: CountLinesDto, ifMatch?: number): Promise<CountSessionView> {
    const s = await this.store.lockFor('count', id, ifMatch);
    const items = await this.refs.items(dto.lines.map((l) => l.itemId));
    const locations = await this.refs.locations(dto.lines.map((l) => l.locationId));
    const lots = await this.refs.lotsByNumber(dto.lines.filter((l) => l.lotNo).map((l) => ({ itemId: l.itemId, lotNo: l.lotNo! })));
    const byKey = new Map<string, NewCount>();
    for (const [i, line] of dto.lines.entries()) {
      const f = `lines[${i}]`;
      const item = this.refs.stockItem(items, line.itemId, `${f}.itemId`, 'new');
      this.refs.location(locations, line.locationId, `${f}.locationId`, 'new', s.facilityId);
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
    await upsertCounts(this.uow.manager, this.uow.tenantId, id, this.uow.userId, [...byKey.values()]);
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
    if (!lines.length) throw invalidState(`${COUNT_SESSION.what} ${s.sessionNo} has no counted lines; count something or cancel it`);
    // Holds that expired stop holding first, so they neither block nor deadlock the posting.
    await this.ledger.releaseExpired([...new Set(lines.map((l) => l.itemId))].map((itemId) => ({ itemId, facilityId: s.facilityId })));
    const available = this.refs.status(await this.refs.statuses(), undefined, 'statusId');
    // A lot counted as new may have been posted since: look the numbers up again.
    const lots = await this.refs.lotsByNumber(lines.filter((l) => l.lotNo).map((l) => ({ itemId: l.itemId, lotNo: l.lotNo! })));
    const keys = lines.map((l) => ({ line: l, lotId: l.lotNo ? (lots.get(`${l.itemId}|${l.lotNo}`) ?? null) : null }));
    // A lot that does not exist has no stock: nothing to lock.
    const existing = keys.filter((k) => !k.line.lotNo || k.lotId);
    const onHand = await this.ledger.lockBalances(
      existing.map((k) => ({ itemId: k.line.itemId, facilityId: s.facilityId, locationId: k.line.locationId, lotId: k.lotId, statusId: available.id })),
    );
    const results = keys.map((k) => {
      const key = balanceKey({ itemId: k.line.itemId, locationId: k.line.locationId, lotId: k.lotId, statusId: available.id });
      const system = onHand.get(key) ?? toQty(0);
      return { ...k, system, variance: toQty(k.line.countedQty).minus(system) };
    });
    const posting: PostingLine[] = [];
    results.forEach((r, i) => {
      if (r.variance.isZero()) return;
      posting.push({
        itemId: r.line.itemId,
        locationId: r.line.locationId,
        statusId: available.id,
        lotId: r.lotId,
        lotNo: r.lotId ? null : r.line.lotNo,
        qty: r.variance,
        field: `lines[${i}]`,
        qtyField: 'countedQty',
      });
    });
    const transaction = posting.length
      ? await this.ledger.post({ type: 'count', reason: `Count session ${s.sessionNo}`, sourceType: 'count_session', sourceId: id, lines: posting })
      : null;
    await recordResults(this.uow.manager, this.uow.tenantId, id, results.map((r) => ({ lineId: r.line.id, system: r.system, variance: r.variance })));
    await this.store.move(id, 'complete', { completedAt: () => 'now()', transactionId: transaction?.id ?? null });
    return this.get(id);
  }

  async cancel(id: string, ifMatch?: number): Promise<CountSessionView> {
    await this.store.lockFor('cancel', id, ifMatch);
    await this.store.move(id, 'cancel');
    return this.get(id);
  }

  /** Lines ordered by item number, location path, lot number. */
  private linesOf(ids: string[]): Promise<CountLine[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.uow
      .repository(CountLine)
      .createQueryBuilder('c')
      .innerJoin(Item, 'i', 'i.tenantId = c.tenantId AND i.id = c.itemId')
      .innerJoin(Location, 'l', 'l.tenantId = c.tenantId AND l.id = c.locationId')
      .where('c.sessionId = ANY(:ids)', { ids })
      .orderBy('c.sessionId')
      .addOrderBy('i.itemNo')
      .addOrderBy('l.path')
      .addOrderBy('c.lotNo', 'ASC', 'NULLS FIRST')
      .addOrderBy('c.id')
      .getMany();
  }
}
