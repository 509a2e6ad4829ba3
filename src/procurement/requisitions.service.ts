import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ErrorDetail, invalidState, notFound, validationFailed } from '../common/errors';
import { documentAudit } from '../common/entity';
import { likePattern, page } from '../common/pagination';
import { UnitOfWork } from '../database/unit-of-work';
import { DocumentStore, Transitions } from '../documents/document-store';
import { DocumentNumbers } from '../documents/numbering.sql';
import { num, sql as numeric, qty as toQty } from '../documents/quantity';
import { activeItem, CatalogRefs } from '../documents/references.sql';
import { UomConversion } from '../documents/uom-conversion.sql';
import { CreateRequisitionDto, ReqStatus, RequisitionLineDto, RequisitionQuery, UpdateRequisitionDto } from './procurement.dto';
import { PurchaseOrdersService } from './purchase-orders.service';
import { Requisition, RequisitionLine } from './requisition.entity';
import { SuppliersService } from './suppliers.service';
import { cursorOf, newestFirst } from '../common/cursor';
import { keysetPageOf } from '../database/keyset-page';

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const REQUISITIONS = newestFirst('requisitions', 'r');

const reqView = (r: Requisition, lines: RequisitionLine[]) => ({
  id: r.id,
  reqNo: r.reqNo,
  facilityId: r.facilityId,
  status: r.status as ReqStatus,
  neededBy: r.neededBy,
  notes: r.notes,
  lines: lines.map((l) => ({ id: l.id, lineNo: l.lineNo, itemId: l.itemId, qty: num(l.qty), uomId: l.uomId, supplierId: l.supplierId })),
  purchaseOrderIds: r.purchaseOrderIds,
  ...documentAudit(r),
});
export type RequisitionView = ReturnType<typeof reqView>;

/** draft →submit→ submitted →approve→ approved →convert→ ordered. PATCH is `change`. */
export const REQUISITION = new Transitions<ReqStatus, 'change' | 'submit' | 'approve' | 'convert'>('Requisition', {
  change: { from: ['draft'] },
  submit: { from: ['draft'], to: 'submitted' },
  approve: { from: ['submitted'], to: 'approved' },
  convert: { from: ['approved'], to: 'ordered' },
});

/** Purchase requisitions: what a facility needs, turned into draft purchase orders once approved. */
@Injectable()
export class RequisitionsService {
  private readonly store: DocumentStore<Requisition, ReqStatus, keyof typeof REQUISITION.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
    private readonly numbers: DocumentNumbers,
    private readonly suppliers: SuppliersService,
    private readonly orders: PurchaseOrdersService,
  ) {
    this.store = new DocumentStore(uow, Requisition, REQUISITION, (r) => r.reqNo);
  }

  private get repo() {
    return this.uow.repository(Requisition);
  }

  private get lineRepo() {
    return this.uow.repository(RequisitionLine);
  }

  /** Newest first (createdAt, then id); q searches reqNo. */
  async list(query: RequisitionQuery) {
    const at = cursorOf(REQUISITIONS, query);
    const qb = this.repo.createQueryBuilder('r');
    if (query.status) qb.where('r.status = :status', { status: query.status });
    if (query.facilityId) qb.where('r.facilityId = :facilityId', { facilityId: query.facilityId });
    if (query.q) qb.where('r.reqNo ILIKE :q', { q: likePattern(query.q) });
    const { rows, count, nextCursor } = await keysetPageOf(qb, REQUISITIONS, query, at);
    const lines = await this.linesOf(rows.map((r) => r.id));
    return page(rows.map((r) => reqView(r, lines.filter((l) => l.requisitionId === r.id))), count, query, nextCursor);
  }

  async get(id: string): Promise<RequisitionView> {
    const row = await this.repo.findOne({ id });
    if (!row) throw notFound('Requisition');
    return reqView(row, await this.linesOf([id]));
  }

  async create(dto: CreateRequisitionDto): Promise<RequisitionView> {
    await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    const lines = await this.checkLines(dto.lines ?? []);
    const id = randomUUID();
    const reqNo = await this.numbers.next('RQ');
    await this.repo.insert({
      id, reqNo, facilityId: dto.facilityId, status: 'draft', neededBy: dto.neededBy ?? null, notes: dto.notes ?? null,
      createdBy: this.uow.userId, updatedBy: this.uow.userId,
    });
    await this.writeLines(id, lines);
    return this.get(id);
  }

  async update(id: string, dto: UpdateRequisitionDto, ifMatch?: number): Promise<RequisitionView> {
    const r = await this.store.lockFor('change', id, ifMatch);
    if (Object.values(dto).every((v) => v === undefined)) return this.get(id);
    if (dto.facilityId !== undefined) await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    if (dto.lines) {
      const lines = await this.checkLines(dto.lines);
      await this.lineRepo.delete({ requisitionId: id });
      await this.writeLines(id, lines);
    }
    const pick = <T>(given: T | undefined, stored: T) => (given === undefined ? stored : given);
    await this.store.touch(id, { facilityId: pick(dto.facilityId, r.facilityId), neededBy: pick(dto.neededBy, r.neededBy), notes: pick(dto.notes, r.notes) });
    return this.get(id);
  }

  async submit(id: string, ifMatch?: number): Promise<RequisitionView> {
    const r = await this.store.lockFor('submit', id, ifMatch);
    if (!(await this.lineRepo.findOne({ requisitionId: id }))) throw invalidState(`Requisition ${r.reqNo} has no lines; add one before submitting`);
    await this.store.move(id, 'submit');
    return this.get(id);
  }

  async approve(id: string, ifMatch?: number): Promise<RequisitionView> {
    await this.store.lockFor('approve', id, ifMatch);
    await this.store.move(id, 'approve');
    return this.get(id);
  }

  /**
   * approved → ordered: one draft purchase order per supplier of the lines (in the order the suppliers
   * first appear), for the requisition's facility, in the supplier's currency, copying item, quantity
   * and UOM, unit price 0 (the buyer prices the draft). A line without a supplier → 400, nothing created.
   */
  async convert(id: string, ifMatch?: number): Promise<RequisitionView> {
    const r = await this.store.lockFor('convert', id, ifMatch);
    const lines = await this.linesOf([id]);
    const missing: ErrorDetail[] = lines.filter((l) => !l.supplierId).map((l) => ({ field: `lines[${l.lineNo - 1}].supplierId`, message: 'is required to convert' }));
    if (missing.length) throw validationFailed(`Every line needs a supplier to convert requisition ${r.reqNo} (${missing.length} without)`, missing);
    const bySupplier = new Map<string, RequisitionLine[]>();
    for (const l of lines) bySupplier.set(l.supplierId!, [...(bySupplier.get(l.supplierId!) ?? []), l]);
    const orderIds: string[] = [];
    for (const [supplierId, group] of bySupplier) {
      const supplier = await this.suppliers.reference(supplierId, `lines[${group[0].lineNo - 1}].supplierId`);
      const checked = await this.orders.checkLines(group.map((l) => ({
        itemId: l.itemId, qtyOrdered: Number(l.qty), uomId: l.uomId, unitPrice: 0, field: `lines[${l.lineNo - 1}]`,
      })));
      const order = await this.orders.insert(
        { supplierId, facilityId: r.facilityId, currency: supplier.currency, orderDate: null, expectedDate: r.neededBy, notes: `From requisition ${r.reqNo}`, requisitionId: id },
        checked,
      );
      orderIds.push(order.id);
    }
    await this.store.move(id, 'convert', { purchaseOrderIds: orderIds });
    return this.get(id);
  }

  /** New work: active items (any kind), quantities in the line's UOM (checked against it), active suppliers. */
  private async checkLines(lines: RequisitionLineDto[]) {
    const items = await this.refs.items(lines.map((l) => l.itemId));
    const checked: Array<{ itemId: string; uomId: string; qty: number; supplierId: string | null }> = [];
    for (const [i, line] of lines.entries()) {
      const f = `lines[${i}]`;
      const item = activeItem(items, line.itemId, `${f}.itemId`);
      await this.uoms.toBase(item, line.uomId, line.qty, `${f}.qty`);
      if (line.supplierId) await this.suppliers.reference(line.supplierId, `${f}.supplierId`);
      checked.push({ itemId: item.id, uomId: line.uomId ?? item.baseUomId, qty: line.qty, supplierId: line.supplierId ?? null });
    }
    return checked;
  }

  private async writeLines(id: string, lines: Array<{ itemId: string; uomId: string; qty: number; supplierId: string | null }>): Promise<void> {
    // One INSERT of all lines (the repository writes an array as one statement).
    await this.lineRepo.insert(lines.map((l, i) => ({
      id: randomUUID(), requisitionId: id, lineNo: i + 1, itemId: l.itemId, uomId: l.uomId, qty: numeric(toQty(String(l.qty))), supplierId: l.supplierId,
    })));
  }

  /** The lines of requisitions, in requisition and line order. */
  private linesOf(ids: string[]): Promise<RequisitionLine[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.lineRepo
      .createQueryBuilder('l')
      .where('l.requisitionId = ANY(:ids)', { ids })
      .orderBy('l.requisitionId')
      .addOrderBy('l.lineNo')
      .getMany();
  }
}
