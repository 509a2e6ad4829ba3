import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ErrorDetail, invalidState, notFound, validationFailed } from '../common/errors';
import { page } from '../common/pagination';
import { SqlFilters } from '../database/filters.sql';
import { UnitOfWork } from '../database/unit-of-work';
import { auditView, DocumentRow, DocumentStore, Transitions } from '../documents/document-store';
import { DocumentNumbers } from '../documents/numbering.sql';
import { num, qty as toQty, sql } from '../documents/quantity';
import { activeItem, CatalogRefs } from '../documents/references.sql';
import { UomConversion } from '../documents/uom-conversion.sql';
import { CreateRequisitionDto, ReqStatus, RequisitionLineDto, RequisitionQuery, UpdateRequisitionDto } from './procurement.dto';
import { PurchaseOrdersService } from './purchase-orders.service';
import { SuppliersService } from './suppliers.service';

interface ReqRow extends DocumentRow {
  req_no: string;
  facility_id: string;
  needed_by: string | null;
  notes: string | null;
  purchase_order_ids: string[];
}

interface ReqLineRow {
  id: string;
  requisition_id: string;
  line_no: number;
  item_id: string;
  uom_id: string;
  qty: string;
  supplier_id: string | null;
}

const REQ_COLUMNS = `id, req_no, facility_id, status, to_char(needed_by, 'YYYY-MM-DD') AS needed_by, notes, purchase_order_ids,
  version, created_by, updated_by, created_at, updated_at`;

const reqView = (r: ReqRow, lines: ReqLineRow[]) => ({
  id: r.id,
  reqNo: r.req_no,
  facilityId: r.facility_id,
  status: r.status as ReqStatus,
  neededBy: r.needed_by,
  notes: r.notes,
  lines: lines.map((l) => ({ id: l.id, lineNo: l.line_no, itemId: l.item_id, qty: num(l.qty), uomId: l.uom_id, supplierId: l.supplier_id })),
  purchaseOrderIds: r.purchase_order_ids,
  ...auditView(r),
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
  private readonly store: DocumentStore<ReqRow, ReqStatus, keyof typeof REQUISITION.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
    private readonly numbers: DocumentNumbers,
    private readonly suppliers: SuppliersService,
    private readonly orders: PurchaseOrdersService,
  ) {
    this.store = new DocumentStore(uow, 'requisitions', REQUISITION, (r) => r.req_no);
  }

  private get m() {
    return this.uow.manager;
  }

  /** Newest first (createdAt, then id); q searches reqNo. */
  async list(query: RequisitionQuery) {
    const f = new SqlFilters(this.uow.tenantId).add('status = ?', query.status).add('facility_id = ?', query.facilityId).search(['req_no'], query.q);
    const { rows, count } = await f.pageOf<ReqRow>(this.m, `SELECT ${REQ_COLUMNS} FROM requisitions WHERE ${f.where}`, 'created_at DESC, id DESC', query);
    const lines = await this.linesOf(rows.map((r) => r.id));
    return page(rows.map((r) => reqView(r, lines.filter((l) => l.requisition_id === r.id))), count, query);
  }

  async get(id: string): Promise<RequisitionView> {
    const [row]: ReqRow[] = await this.m.query(`SELECT ${REQ_COLUMNS} FROM requisitions WHERE tenant_id = $1 AND id = $2`, [this.uow.tenantId, id]);
    if (!row) throw notFound('Requisition');
    return reqView(row, await this.linesOf([id]));
  }

  async create(dto: CreateRequisitionDto): Promise<RequisitionView> {
    await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    const lines = await this.checkLines(dto.lines ?? []);
    const id = randomUUID();
    const reqNo = await this.numbers.next('RQ');
    await this.m.query(
      `INSERT INTO requisitions (tenant_id, id, req_no, facility_id, status, needed_by, notes, created_by, updated_by)
       VALUES ($1, $2, $3, $4, 'draft', $5, $6, $7, $7)`,
      [this.uow.tenantId, id, reqNo, dto.facilityId, dto.neededBy ?? null, dto.notes ?? null, this.uow.userId],
    );
    await this.writeLines(id, lines);
    return this.get(id);
  }

  async update(id: string, dto: UpdateRequisitionDto, ifMatch?: number): Promise<RequisitionView> {
    const r = await this.store.lockFor('change', id, ifMatch);
    if (Object.values(dto).every((v) => v === undefined)) return this.get(id);
    if (dto.facilityId !== undefined) await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    if (dto.lines) {
      const lines = await this.checkLines(dto.lines);
      await this.m.query(`DELETE FROM requisition_lines WHERE tenant_id = $1 AND requisition_id = $2`, [this.uow.tenantId, id]);
      await this.writeLines(id, lines);
    }
    const pick = <T>(given: T | undefined, stored: T) => (given === undefined ? stored : given);
    await this.store.touch(id, 'facility_id = $4, needed_by = $5, notes = $6', [pick(dto.facilityId, r.facility_id), pick(dto.neededBy, r.needed_by), pick(dto.notes, r.notes)]);
    return this.get(id);
  }

  async submit(id: string, ifMatch?: number): Promise<RequisitionView> {
    const r = await this.store.lockFor('submit', id, ifMatch);
    if (!(await this.linesOf([id])).length) throw invalidState(`Requisition ${r.req_no} has no lines; add one before submitting`);
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
    const missing: ErrorDetail[] = lines.filter((l) => !l.supplier_id).map((l) => ({ field: `lines[${l.line_no - 1}].supplierId`, message: 'is required to convert' }));
    if (missing.length) throw validationFailed(`Every line needs a supplier to convert requisition ${r.req_no} (${missing.length} without)`, missing);
    const bySupplier = new Map<string, ReqLineRow[]>();
    for (const l of lines) bySupplier.set(l.supplier_id!, [...(bySupplier.get(l.supplier_id!) ?? []), l]);
    const orderIds: string[] = [];
    for (const [supplierId, group] of bySupplier) {
      const supplier = await this.suppliers.reference(supplierId, `lines[${group[0].line_no - 1}].supplierId`);
      const checked = await this.orders.checkLines(group.map((l) => ({
        itemId: l.item_id, qtyOrdered: Number(l.qty), uomId: l.uom_id, unitPrice: 0, field: `lines[${l.line_no - 1}]`,
      })));
      const order = await this.orders.insert(
        { supplierId, facilityId: r.facility_id, currency: supplier.currency, orderDate: null, expectedDate: r.needed_by, notes: `From requisition ${r.req_no}`, requisitionId: id },
        checked,
      );
      orderIds.push(order.id);
    }
    await this.store.move(id, 'convert', 'purchase_order_ids = $4', [orderIds]);
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
    if (!lines.length) return;
    await this.m.query(
      `INSERT INTO requisition_lines (tenant_id, id, requisition_id, line_no, item_id, uom_id, qty, supplier_id)
       SELECT $1, gen_random_uuid(), $2, k.ord, k.item_id, k.uom_id, k.qty, k.supplier_id
         FROM unnest($3::uuid[], $4::uuid[], $5::numeric[], $6::uuid[]) WITH ORDINALITY AS k(item_id, uom_id, qty, supplier_id, ord)`,
      [this.uow.tenantId, id, lines.map((l) => l.itemId), lines.map((l) => l.uomId), lines.map((l) => sql(toQty(String(l.qty)))), lines.map((l) => l.supplierId)],
    );
  }

  private linesOf(ids: string[]): Promise<ReqLineRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.m.query(
      `SELECT id, requisition_id, line_no, item_id, uom_id, qty, supplier_id FROM requisition_lines
        WHERE tenant_id = $1 AND requisition_id = ANY($2::uuid[]) ORDER BY requisition_id, line_no`,
      [this.uow.tenantId, ids],
    );
  }
}
