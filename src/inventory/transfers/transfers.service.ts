import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { validationFailed } from '../../common/errors';
import { page } from '../../common/pagination';
import { SqlFilters } from '../../database/filters.sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { auditView, DocumentRow, DocumentStore, Transitions } from '../../documents/document-store';
import { DocumentNumbers } from '../../documents/numbering.sql';
import { num, qty as toQty, sql } from '../../documents/quantity';
import { CatalogRefs } from '../../documents/references.sql';
import { checkLotId, checkSerials } from '../../documents/tracking';
import { UomConversion } from '../../documents/uom-conversion.sql';
import { LedgerService } from '../ledger/ledger.service';
import { PostingLine } from '../ledger/posting';
import { CreateTransferDto, TransferLineDto, TransferQuery, TransferStatus, UpdateTransferDto } from './dto/transfer.dto';

interface TransferRow extends DocumentRow {
  transfer_no: string;
  from_facility_id: string;
  to_facility_id: string;
  notes: string | null;
  shipped_at: Date | null;
  received_at: Date | null;
}

interface TransferLineRow {
  id: string;
  transfer_order_id: string;
  line_no: number;
  item_id: string;
  qty: string;
  from_location_id: string;
  to_location_id: string;
  lot_id: string | null;
  serial_nos: string[] | null;
  qty_shipped: string;
  qty_received: string;
}

/** A checked line, quantity in base units. */
interface NewLine {
  itemId: string;
  qty: Decimal;
  fromLocationId: string;
  toLocationId: string;
  lotId: string | null;
  serialNos: string[];
}

const transferView = (t: TransferRow, lines: TransferLineRow[]) => ({
  id: t.id,
  transferNo: t.transfer_no,
  fromFacilityId: t.from_facility_id,
  toFacilityId: t.to_facility_id,
  status: t.status as TransferStatus,
  notes: t.notes,
  lines: lines.map((l) => ({
    id: l.id,
    lineNo: l.line_no,
    itemId: l.item_id,
    qty: num(l.qty),
    fromLocationId: l.from_location_id,
    toLocationId: l.to_location_id,
    lotId: l.lot_id,
    qtyShipped: num(l.qty_shipped),
    qtyReceived: num(l.qty_received),
  })),
  shippedAt: t.shipped_at,
  receivedAt: t.received_at,
  ...auditView(t),
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
  private readonly store: DocumentStore<TransferRow, TransferStatus, keyof typeof TRANSFER.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly ledger: LedgerService,
    private readonly uoms: UomConversion,
    private readonly numbers: DocumentNumbers,
  ) {
    this.store = new DocumentStore(uow, 'transfer_orders', TRANSFER, (r) => r.transfer_no);
  }

  private get m() {
    return this.uow.manager;
  }

  /** Newest first (createdAt, then id); q searches transferNo. Lines of the page in one query. */
  async list(query: TransferQuery) {
    const f = new SqlFilters(this.uow.tenantId)
      .add('status = ?', query.status)
      .add('from_facility_id = ?', query.fromFacilityId)
      .add('to_facility_id = ?', query.toFacilityId)
      .search(['transfer_no'], query.q);
    const { rows, count } = await f.pageOf<TransferRow>(this.m, `SELECT * FROM transfer_orders WHERE ${f.where}`, 'created_at DESC, id DESC', query);
    const lines = await this.linesOf(rows.map((r) => r.id));
    return page(rows.map((r) => transferView(r, lines.filter((l) => l.transfer_order_id === r.id))), count, query);
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
    await this.m.query(
      `INSERT INTO transfer_orders (tenant_id, id, transfer_no, from_facility_id, to_facility_id, status, notes, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, 'draft', $6, $7, $7)`,
      [this.uow.tenantId, id, transferNo, dto.fromFacilityId, dto.toFacilityId, dto.notes ?? null, this.uow.userId],
    );
    await this.writeLines(id, lines);
    return this.get(id);
  }

  /** Draft only: notes and/or lines (a given `lines` replaces all lines). */
  async update(id: string, dto: UpdateTransferDto, ifMatch?: number): Promise<TransferView> {
    const t = await this.store.lockFor('change', id, ifMatch);
    if (dto.notes === undefined && !dto.lines) return this.get(id);
    if (dto.lines) {
      const lines = await this.checkLines(dto.lines, t.from_facility_id, t.to_facility_id);
      await this.m.query(`DELETE FROM transfer_order_lines WHERE tenant_id = $1 AND transfer_order_id = $2`, [this.uow.tenantId, id]);
      await this.writeLines(id, lines);
    }
    await this.store.touch(id, 'notes = $4', [dto.notes !== undefined ? dto.notes : t.notes]);
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
        ...this.postingLine(l, i, l.from_location_id),
        qty: toQty(l.qty).negated(),
        // Serial-tracked lines without serial numbers take the serials in stock at the location.
        pickSerials: !l.serial_nos,
      })),
    });
    // Posting line i is ledger line i + 1, as transfer line i is line_no i + 1: record what shipped,
    // including the serials picked, so receiving puts the same serials in stock.
    await this.m.query(
      `UPDATE transfer_order_lines t SET qty_shipped = t.qty, serial_nos = l.serial_nos
         FROM ledger_lines l
        WHERE t.tenant_id = $1 AND t.transfer_order_id = $2
          AND l.tenant_id = $1 AND l.transaction_id = $3 AND l.line_no = t.line_no`,
      [this.uow.tenantId, id, txn.id],
    );
    await this.store.move(id, 'ship', 'shipped_at = now()');
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
      lines: lines.map((l, i) => ({ ...this.postingLine(l, i, l.to_location_id), qty: toQty(l.qty_shipped) })),
    });
    await this.m.query(
      `UPDATE transfer_order_lines SET qty_received = qty_shipped WHERE tenant_id = $1 AND transfer_order_id = $2`,
      [this.uow.tenantId, id],
    );
    await this.store.move(id, 'receive', 'received_at = now()');
    return this.get(id);
  }

  async cancel(id: string, ifMatch?: number): Promise<TransferView> {
    await this.store.lockFor('cancel', id, ifMatch);
    await this.store.move(id, 'cancel');
    return this.get(id);
  }

  private postingLine(l: TransferLineRow, i: number, locationId: string): Omit<PostingLine, 'qty'> {
    return {
      itemId: l.item_id,
      locationId,
      lotId: l.lot_id,
      serialNos: l.serial_nos ?? undefined,
      field: `lines[${i}]`,
    };
  }

  /**
   * Each line (new work: active item, facilities and locations): locations of the right facilities; the
   * quantity converted to base units; the item's lot and serial tracking rules.
   */
  private async checkLines(lines: TransferLineDto[], fromFacilityId: string, toFacilityId: string): Promise<NewLine[]> {
    const items = await this.refs.items(lines.map((l) => l.itemId));
    const locations = await this.refs.locations(lines.flatMap((l) => [l.fromLocationId, l.toLocationId]));
    const lots = await this.refs.lots(lines.map((l) => l.lotId).filter((x): x is string => !!x));
    const checked: NewLine[] = [];
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

  /** Lines numbered 1..n in the given order. */
  private async writeLines(transferId: string, lines: NewLine[]): Promise<void> {
    await this.m.query(
      `INSERT INTO transfer_order_lines (tenant_id, id, transfer_order_id, line_no, item_id, qty, from_location_id, to_location_id, lot_id, serial_nos)
       SELECT $1, k.id, $2, k.ord, k.item_id, k.qty, k.from_id, k.to_id, k.lot_id, NULLIF(string_to_array(k.serials, E'\\x1f'), '{}')
         FROM unnest($3::uuid[], $4::uuid[], $5::numeric[], $6::uuid[], $7::uuid[], $8::uuid[], $9::text[])
              WITH ORDINALITY AS k(id, item_id, qty, from_id, to_id, lot_id, serials, ord)`,
      [
        this.uow.tenantId,
        transferId,
        lines.map(() => randomUUID()),
        lines.map((l) => l.itemId),
        lines.map((l) => sql(l.qty)),
        lines.map((l) => l.fromLocationId),
        lines.map((l) => l.toLocationId),
        lines.map((l) => l.lotId),
        lines.map((l) => l.serialNos.join('\x1f')),
      ],
    );
  }

  private linesOf(ids: string[]): Promise<TransferLineRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.m.query(
      `SELECT * FROM transfer_order_lines WHERE tenant_id = $1 AND transfer_order_id = ANY($2::uuid[]) ORDER BY transfer_order_id, line_no`,
      [this.uow.tenantId, ids],
    );
  }
}
