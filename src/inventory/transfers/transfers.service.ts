import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { In } from 'typeorm';
import { validationFailed } from '../../common/errors';
import { documentAudit } from '../../common/entity';
import { likePattern, page } from '../../common/pagination';
import { UnitOfWork } from '../../database/unit-of-work';
import { DocumentStore, Transitions } from '../../documents/document-store';
import { DocumentNumbers } from '../../documents/numbering.sql';
import { num, qty as toQty } from '../../documents/quantity';
import { CatalogRefs } from '../../documents/references.sql';
import { checkLotId, checkSerials } from '../../documents/tracking';
import { UomConversion } from '../../documents/uom-conversion.sql';
import { LedgerService } from '../ledger/ledger.service';
import { PostingLine } from '../ledger/posting';
import { CreateTransferDto, TransferLineDto, TransferQuery, TransferStatus, UpdateTransferDto } from './dto/transfer.dto';
import { TransferOrder, TransferOrderLine } from './transfer.entity';
import { insertTransferLines, NewTransferLine, recordShipped } from './transfers.sql';
import { cursorOf, newestFirst } from '../../common/cursor';
import { keysetPageOf } from '../../database/keyset-page';

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const TRANSFERS = newestFirst('transfers', 't');

const transferView = (t: TransferOrder, lines: TransferOrderLine[]) => ({
  id: t.id,
  transferNo: t.transferNo,
  fromFacilityId: t.fromFacilityId,
  toFacilityId: t.toFacilityId,
  status: t.status as TransferStatus,
  notes: t.notes,
  lines: lines.map((l) => ({
    id: l.id,
    lineNo: l.lineNo,
    itemId: l.itemId,
    qty: num(l.qty),
    fromLocationId: l.fromLocationId,
    toLocationId: l.toLocationId,
    lotId: l.lotId,
    qtyShipped: num(l.qtyShipped),
    qtyReceived: num(l.qtyReceived),
  })),
  shippedAt: t.shippedAt,
  receivedAt: t.receivedAt,
  ...documentAudit(t),
});
export type TransferView = ReturnType<typeof transferView>;

/** draft → shipped → received; draft → cancelled. PATCH is the `change` action. */
export const TRANSFER = new Transitions<TransferStatus, 'change' | 'ship' | 'receive' | 'cancel'>('Transfer order', {
  change: { from: ['draft'] },
  ship: { from: ['draft'], to: 'shipped' },
  receive: { from: ['shipped'], to: 'received' },
  cancel: { from: ['draft'], to: 'cancelled' },
});

/**
 * Transfer orders between two facilities: draft → shipped (one `transfer_out` posting at the source
 * locations) → received (one `transfer_in` posting at the destination locations); draft → cancelled.
 * Between ship and receive the stock is in transit: on hand at neither facility.
 */
@Injectable()
export class TransfersService {
  private readonly store: DocumentStore<TransferOrder, TransferStatus, keyof typeof TRANSFER.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly ledger: LedgerService,
    private readonly uoms: UomConversion,
    private readonly numbers: DocumentNumbers,
  ) {
    this.store = new DocumentStore(uow, TransferOrder, TRANSFER, (t) => t.transferNo);
  }

  private get lineRepo() {
    return this.uow.repository(TransferOrderLine);
  }

  /** Newest first (createdAt, then id); q searches transferNo. Lines of the page in one query. */
  async list(query: TransferQuery) {
    const at = cursorOf(TRANSFERS, query);
    const qb = this.store.repository.createQueryBuilder('t');
    if (query.status) qb.where('t.status = :status', { status: query.status });
    if (query.fromFacilityId) qb.where('t.fromFacilityId = :fromFacilityId', { fromFacilityId: query.fromFacilityId });
    if (query.toFacilityId) qb.where('t.toFacilityId = :toFacilityId', { toFacilityId: query.toFacilityId });
    if (query.q) qb.where('t.transferNo ILIKE :q', { q: likePattern(query.q) });
    const { rows, count, nextCursor } = await keysetPageOf(qb, TRANSFERS, query, at);
    const lines = await this.linesOf(rows.map((t) => t.id));
    return page(rows.map((t) => transferView(t, lines.filter((l) => l.transferOrderId === t.id))), count, query, nextCursor);
  }

  async get(id: string): Promise<TransferView> {
    return transferView(await this.store.find(id), await this.linesOf([id]));
  }

  async create(dto: CreateTransferDto): Promise<TransferView> {
    if (dto.fromFacilityId === dto.toFacilityId)
      throw validationFailed('toFacilityId must differ from fromFacilityId', [{ field: 'toFacilityId', message: 'must differ from fromFacilityId' }]);
    await this.refs.facility(dto.fromFacilityId, 'fromFacilityId', 'new');
    await this.refs.facility(dto.toFacilityId, 'toFacilityId', 'new');
    const lines = await this.checkLines(dto.lines, dto.fromFacilityId, dto.toFacilityId);
    const id = randomUUID();
    const transferNo = await this.numbers.next('TO');
    await this.store.repository.insert({
      id, transferNo, fromFacilityId: dto.fromFacilityId, toFacilityId: dto.toFacilityId, status: 'draft', notes: dto.notes ?? null,
      createdBy: this.uow.userId, updatedBy: this.uow.userId,
    });
    await insertTransferLines(this.uow.manager, this.uow.tenantId, id, lines);
    return this.get(id);
  }

  /** Draft only: notes and/or lines (a given `lines` replaces all lines). */
  async update(id: string, dto: UpdateTransferDto, ifMatch?: number): Promise<TransferView> {
    const t = await this.store.lockFor('change', id, ifMatch);
    if (dto.notes === undefined && !dto.lines) return this.get(id);
    if (dto.lines) {
      const lines = await this.checkLines(dto.lines, t.fromFacilityId, t.toFacilityId);
      await this.lineRepo.delete({ transferOrderId: id });
      await insertTransferLines(this.uow.manager, this.uow.tenantId, id, lines);
    }
    await this.store.touch(id, { notes: dto.notes !== undefined ? dto.notes : t.notes });
    return this.get(id);
  }

  /** draft → shipped: one `transfer_out` posting, a negative line per transfer line at its from location. */
  async ship(id: string, ifMatch?: number): Promise<TransferView> {
    await this.store.lockFor('ship', id, ifMatch);
    const lines = await this.linesOf([id]);
    const txn = await this.ledger.post({
      type: 'transfer_out',
      sourceType: 'transfer_order',
      sourceId: id,
      // A draft has committed nothing yet: shipping it starts the movement, so inactive items,
      // locations and facilities are refused. Receiving what shipped finishes it and is not refused.
      startsWork: true,
      lines: lines.map((l, i) => ({
        ...this.postingLine(l, i, l.fromLocationId),
        qty: toQty(l.qty).negated(),
        // Serial-tracked lines without serial numbers take the serials in stock at the location.
        pickSerials: !l.serialNos,
      })),
    });
    // Record what shipped, including the serials picked, so receiving puts the same serials in stock.
    await recordShipped(this.uow.manager, this.uow.tenantId, id, txn.id);
    await this.store.move(id, 'ship', { shippedAt: () => 'now()' });
    return this.get(id);
  }

  /** shipped → received: one `transfer_in` posting, a positive line per transfer line at its to location. */
  async receive(id: string, ifMatch?: number): Promise<TransferView> {
    await this.store.lockFor('receive', id, ifMatch);
    const lines = await this.linesOf([id]);
    await this.ledger.post({
      type: 'transfer_in',
      sourceType: 'transfer_order',
      sourceId: id,
      lines: lines.map((l, i) => ({ ...this.postingLine(l, i, l.toLocationId), qty: toQty(l.qtyShipped) })),
    });
    // Every line at once: what shipped is what is received (a function value is SQL: the line's own column).
    await this.lineRepo.update({ transferOrderId: id }, { qtyReceived: () => 'qty_shipped' });
    await this.store.move(id, 'receive', { receivedAt: () => 'now()' });
    return this.get(id);
  }

  async cancel(id: string, ifMatch?: number): Promise<TransferView> {
    await this.store.lockFor('cancel', id, ifMatch);
    await this.store.move(id, 'cancel');
    return this.get(id);
  }

  private postingLine(l: TransferOrderLine, i: number, locationId: string): Omit<PostingLine, 'qty'> {
    return {
      itemId: l.itemId,
      locationId,
      lotId: l.lotId,
      serialNos: l.serialNos ?? undefined,
      field: `lines[${i}]`,
    };
  }

  /**
   * Each line (new work: active item, facilities and locations): locations of the right facilities; the
   * quantity converted to base units; the item's lot and serial tracking rules.
   */
  private async checkLines(lines: TransferLineDto[], fromFacilityId: string, toFacilityId: string): Promise<NewTransferLine[]> {
    const items = await this.refs.items(lines.map((l) => l.itemId));
    const locations = await this.refs.locations(lines.flatMap((l) => [l.fromLocationId, l.toLocationId]));
    const lots = await this.refs.lots(lines.map((l) => l.lotId).filter((x): x is string => !!x));
    const checked: NewTransferLine[] = [];
    for (const [i, line] of lines.entries()) {
      const f = `lines[${i}]`;
      const item = this.refs.stockItem(items, line.itemId, `${f}.itemId`, 'new');
      this.refs.location(locations, line.fromLocationId, `${f}.fromLocationId`, 'new', fromFacilityId);
      this.refs.location(locations, line.toLocationId, `${f}.toLocationId`, 'new', toFacilityId);
      const qty = await this.uoms.toBase(item, line.uomId, line.qty, `${f}.qty`);
      checkLotId(lots, line.lotId, item, `${f}.lotId`);
      // Serials may be left out: the ones in stock at the from location are picked when it ships.
      const serialNos = checkSerials(item, qty, line.serialNos, f, { mayPick: true });
      checked.push({ itemId: item.id, qty, fromLocationId: line.fromLocationId, toLocationId: line.toLocationId, lotId: line.lotId ?? null, serialNos });
    }
    return checked;
  }

  /** The lines of the given transfers, by transfer, in line order. */
  private linesOf(ids: string[]): Promise<TransferOrderLine[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.lineRepo.find({ where: { transferOrderId: In(ids) }, order: { transferOrderId: 'ASC', lineNo: 'ASC' } });
  }
}
