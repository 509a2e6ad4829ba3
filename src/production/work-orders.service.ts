import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { AppError, invalidField, invalidState, notFound, unknownReference } from '../common/errors';
import { page } from '../common/pagination';
import { SqlFilters } from '../database/filters.sql';
import { UnitOfWork } from '../database/unit-of-work';
import { auditView, DocumentRow, DocumentStore, Transitions } from '../documents/document-store';
import { DocumentNumbers } from '../documents/numbering.sql';
import { num, qty as toQty, roundUp, sql } from '../documents/quantity';
import { CatalogRefs, ItemRef } from '../documents/references.sql';
import { LedgerService } from '../inventory/ledger/ledger.service';
import { IssueLine, PostingLine } from '../inventory/ledger/posting';
import { BomRow, BomsService } from './boms.service';
import { CompleteWorkOrderDto, CreateWorkOrderDto, WoStatus, WorkOrderQuery } from './production.dto';

interface WoRow extends DocumentRow {
  wo_no: string;
  item_id: string;
  bom_id: string;
  facility_id: string;
  qty_planned: string;
  qty_completed: string;
  output_location_id: string | null;
  due_date: string | null;
  transaction_id: string | null;
  released_at: Date | null;
  completed_at: Date | null;
}

interface WoComponentRow {
  id: string;
  work_order_id: string;
  line_no: number;
  item_id: string;
  qty_required: string;
  qty_issued: string;
  reservation_id: string | null;
}

const WO_COLUMNS = `id, wo_no, item_id, bom_id, facility_id, qty_planned, qty_completed, status, output_location_id,
  to_char(due_date, 'YYYY-MM-DD') AS due_date, transaction_id, released_at, completed_at, version, created_by, updated_by, created_at, updated_at`;

const woView = (w: WoRow, components: WoComponentRow[]) => ({
  id: w.id,
  woNo: w.wo_no,
  itemId: w.item_id,
  bomId: w.bom_id,
  facilityId: w.facility_id,
  qtyPlanned: num(w.qty_planned),
  qtyCompleted: num(w.qty_completed),
  status: w.status as WoStatus,
  outputLocationId: w.output_location_id,
  dueDate: w.due_date,
  components: components.map((c) => ({
    id: c.id, lineNo: c.line_no, itemId: c.item_id, qtyRequired: num(c.qty_required), qtyIssued: num(c.qty_issued), reservationId: c.reservation_id,
  })),
  transactionId: w.transaction_id,
  releasedAt: w.released_at,
  completedAt: w.completed_at,
  ...auditView(w),
});
export type WorkOrderView = ReturnType<typeof woView>;

/** draft →release→ released →complete→ completed; cancel from draft|released. */
export const WORK_ORDER = new Transitions<WoStatus, 'release' | 'complete' | 'cancel'>('Work order', {
  release: { from: ['draft'], to: 'released' },
  complete: { from: ['released'], to: 'completed' },
  cancel: { from: ['draft', 'released'], to: 'cancelled' },
});

/** Work orders: make an item from its BOM's components at a facility, through the ledger. */
@Injectable()
export class WorkOrdersService {
  private readonly store: DocumentStore<WoRow, WoStatus, keyof typeof WORK_ORDER.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly numbers: DocumentNumbers,
    private readonly ledger: LedgerService,
    private readonly boms: BomsService,
  ) {
    this.store = new DocumentStore(uow, 'work_orders', WORK_ORDER, (w) => w.wo_no);
  }

  private get m() {
    return this.uow.manager;
  }

  /** Newest first (createdAt, then id); filters status, itemId, facilityId; q searches woNo. */
  async list(query: WorkOrderQuery) {
    const f = new SqlFilters(this.uow.tenantId)
      .add('status = ?', query.status).add('item_id = ?', query.itemId).add('facility_id = ?', query.facilityId).search(['wo_no'], query.q);
    const { rows, count } = await f.pageOf<WoRow>(this.m, `SELECT ${WO_COLUMNS} FROM work_orders WHERE ${f.where}`, 'created_at DESC, id DESC', query);
    const components = await this.componentsOf(rows.map((r) => r.id));
    return page(rows.map((r) => woView(r, components.filter((c) => c.work_order_id === r.id))), count, query);
  }

  async get(id: string): Promise<WorkOrderView> {
    const [row]: WoRow[] = await this.m.query(`SELECT ${WO_COLUMNS} FROM work_orders WHERE tenant_id = $1 AND id = $2`, [this.uow.tenantId, id]);
    if (!row) throw notFound('Work order');
    return woView(row, await this.componentsOf([id]));
  }

  /**
   * A draft for `qtyPlanned` of the item from `bomId` (an active BOM of the item) or the item's active
   * BOM. The BOM version is fixed on the order, and so are the component requirements:
   * qtyPer × qtyPlanned / outputQty × (1 + scrapFactor), converted to base units, rounded up.
   */
  async create(dto: CreateWorkOrderDto): Promise<WorkOrderView> {
    const item = await this.refs.oneStockItem(dto.itemId, 'itemId', 'new');
    await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    if (dto.outputLocationId) {
      this.refs.location(await this.refs.locations([dto.outputLocationId]), dto.outputLocationId, 'outputLocationId', 'new', dto.facilityId);
    }
    const qtyPlanned = toQty(dto.qtyPlanned);
    if (qtyPlanned.decimalPlaces() > item.decimals) throw invalidField('qtyPlanned', `must have at most ${item.decimals} decimals (the base unit of ${item.itemNo})`);
    const bom = await this.bomFor(item, dto.bomId);
    const required = await this.requirements(bom, qtyPlanned);
    const id = randomUUID();
    const woNo = await this.numbers.next('WO');
    await this.m.query(
      `INSERT INTO work_orders (tenant_id, id, wo_no, item_id, bom_id, facility_id, qty_planned, status, output_location_id, due_date, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'draft', $8, $9, $10, $10)`,
      [this.uow.tenantId, id, woNo, item.id, bom.id, dto.facilityId, sql(qtyPlanned), dto.outputLocationId ?? null, dto.dueDate ?? null, this.uow.userId],
    );
    await this.m.query(
      `INSERT INTO work_order_components (tenant_id, id, work_order_id, line_no, item_id, qty_required)
       SELECT $1, gen_random_uuid(), $2, k.ord, k.item_id, k.qty FROM unnest($3::uuid[], $4::numeric[]) WITH ORDINALITY AS k(item_id, qty, ord)`,
      [this.uow.tenantId, id, required.map((r) => r.itemId), required.map((r) => sql(r.qty))],
    );
    return this.get(id);
  }

  /** draft → released: every component reserved at the facility, all or nothing (409 listing every shortfall). */
  async release(id: string, ifMatch?: number): Promise<WorkOrderView> {
    const w = await this.store.lockFor('release', id, ifMatch);
    // Reserved in the positions' lock order (item id), whatever the BOM's order, as a sales order's open:
    // work orders whose BOMs list the same components in opposite order queue instead of deadlocking.
    const components = (await this.componentsOf([id])).sort((a, b) => (a.item_id < b.item_id ? -1 : a.item_id > b.item_id ? 1 : a.line_no - b.line_no));
    const reservations = await this.ledger.reserveAll(components.map((c) => ({
      itemId: c.item_id, facilityId: w.facility_id, qty: c.qty_required, demandType: 'work_order' as const,
      demandId: id, demandLineId: c.id, field: `components[${c.line_no - 1}]`,
    }))).catch((err: unknown) => {
      // A shortage lists its short components in the BOM's order (they were reserved in item order).
      if (err instanceof AppError && err.code === 'insufficient_stock' && err.details) {
        const index = (field?: string) => Number(/^components\[(\d+)\]/.exec(field ?? '')?.[1] ?? 0);
        throw new AppError(err.status, err.code, err.message, [...err.details].sort((a, b) => index(a.field) - index(b.field)));
      }
      throw err;
    });
    await this.m.query(
      `UPDATE work_order_components c SET reservation_id = k.reservation_id
         FROM unnest($3::uuid[], $4::uuid[]) AS k(id, reservation_id)
        WHERE c.tenant_id = $1 AND c.work_order_id = $2 AND c.id = k.id`,
      [this.uow.tenantId, id, components.map((c) => c.id), reservations],
    );
    await this.store.move(id, 'release', 'released_at = now()');
    return this.get(id);
  }

  /**
   * released → completed: the component reservations are allocated (automatically, earliest expiry first)
   * where they are not yet; one `production` transaction issues each component (its requirement scaled to
   * qtyCompleted / qtyPlanned, rounded up) from its allocations and posts the output at the output
   * location; what the reservations still hold is then freed.
   */
  async complete(id: string, dto: CompleteWorkOrderDto, ifMatch?: number): Promise<WorkOrderView> {
    const w = await this.store.lockFor('complete', id, ifMatch);
    const [item] = (await this.refs.items([w.item_id])).values();
    const planned = toQty(w.qty_planned);
    const done = dto.qtyCompleted === undefined ? planned : toQty(dto.qtyCompleted);
    if (done.gt(planned)) throw invalidField('qtyCompleted', `must not exceed qtyPlanned (${planned.toFixed()})`);
    if (done.decimalPlaces() > item.decimals) throw invalidField('qtyCompleted', `must have at most ${item.decimals} decimals (the base unit of ${item.itemNo})`);
    const locationId = dto.outputLocationId ?? w.output_location_id;
    if (!locationId) throw invalidField('outputLocationId', 'is required: the work order has no output location');
    // Finishing released work: an output location deactivated since is not refused.
    this.refs.location(await this.refs.locations([locationId]), locationId, 'outputLocationId', 'committed', w.facility_id);
    const components = await this.componentsOf([id]);
    const componentItems = await this.refs.items(components.map((c) => c.item_id));
    const issued = components.map((c) => {
      const decimals = componentItems.get(c.item_id)!.decimals;
      const scaled = roundUp(toQty(c.qty_required).times(done).div(planned), decimals);
      return { c, qty: Decimal.min(scaled, toQty(c.qty_required)) };
    });
    // Issuing takes allocated stock: pin what is not yet allocated, earliest expiry first, for every
    // component in one pass (the holds, then all their stock, in the ledger's lock order).
    const holds = await this.ledger.lockedReservations(issued.map(({ c }) => c.reservation_id!));
    await this.ledger.allocateAll(
      holds.filter((h) => h.status === 'open').map((h) => ({ reservationId: h.id, field: `components[${issued.find(({ c }) => c.reservation_id === h.id)!.c.line_no - 1}]` })),
      holds.map((h) => h.id),
    );
    const txn = await this.ledger.post({
      type: 'production',
      sourceType: 'work_order',
      sourceId: id,
      lines: [
        ...issued.map(({ c, qty }): IssueLine => ({ reservationId: c.reservation_id!, qty, field: `components[${c.line_no - 1}]` })),
        {
          itemId: w.item_id, locationId, qty: done, lotNo: dto.lotNo ?? null, expiryDate: dto.expiryDate ?? null, serialNos: dto.serialNos ?? null,
        } satisfies PostingLine,
      ],
    });
    await this.ledger.closeReservations(issued.map(({ c }) => c.reservation_id!));
    await this.m.query(
      `UPDATE work_order_components c SET qty_issued = k.qty FROM unnest($3::uuid[], $4::numeric[]) AS k(id, qty)
        WHERE c.tenant_id = $1 AND c.work_order_id = $2 AND c.id = k.id`,
      [this.uow.tenantId, id, issued.map(({ c }) => c.id), issued.map(({ qty }) => sql(qty))],
    );
    await this.store.move(id, 'complete', 'qty_completed = $4, output_location_id = $5, transaction_id = $6, completed_at = now()', [sql(done), locationId, txn.id]);
    return this.get(id);
  }

  /** draft|released → cancelled: the component reservations still holding are cancelled (freed). */
  async cancel(id: string, ifMatch?: number): Promise<WorkOrderView> {
    await this.store.lockFor('cancel', id, ifMatch);
    const components = await this.componentsOf([id]);
    await this.ledger.releaseAll(components.flatMap((c) => (c.reservation_id ? [c.reservation_id] : [])), 'cancelled');
    await this.store.move(id, 'cancel');
    return this.get(id);
  }

  /** `bomId` (of this item, active) or the item's active BOM; 409 when there is none. */
  private async bomFor(item: ItemRef, bomId?: string): Promise<BomRow> {
    if (bomId) {
      const [bom]: BomRow[] = await this.m.query(`SELECT * FROM boms WHERE tenant_id = $1 AND id = $2 FOR SHARE`, [this.uow.tenantId, bomId]);
      if (!bom) throw unknownReference('bomId');
      if (bom.item_id !== item.id) throw invalidField('bomId', `is a BOM of another item, not of ${item.itemNo}`);
      if (bom.status !== 'active') throw invalidState(`BOM v${bom.version_no} of ${item.itemNo} is ${bom.status}; a work order needs an active BOM`);
      return bom;
    }
    const [bom]: BomRow[] = await this.m.query(`SELECT * FROM boms WHERE tenant_id = $1 AND item_id = $2 AND status = 'active' FOR SHARE`, [this.uow.tenantId, item.id]);
    if (!bom) throw invalidState(`${item.itemNo} has no active BOM`);
    return bom;
  }

  /** Each component's requirement in base units: qtyPer × qtyPlanned / outputQty × (1 + scrapFactor) × factor, rounded up. */
  private async requirements(bom: BomRow, qtyPlanned: Decimal): Promise<Array<{ itemId: string; qty: Decimal }>> {
    const components = await this.boms.componentsOf([bom.id]);
    const rows: Array<{ item_id: string; uom_id: string; decimals: number; factor: string | null }> = await this.m.query(
      `SELECT k.item_id, k.uom_id, u.decimals,
              CASE WHEN i.base_uom_id = k.uom_id THEN 1 ELSE c.factor END AS factor
         FROM unnest($2::uuid[], $3::uuid[]) AS k(item_id, uom_id)
         JOIN items i ON i.tenant_id = $1 AND i.id = k.item_id
         JOIN uoms u ON u.tenant_id = $1 AND u.id = i.base_uom_id
         LEFT JOIN item_uom_conversions c ON c.tenant_id = $1 AND c.item_id = k.item_id AND c.uom_id = k.uom_id`,
      [this.uow.tenantId, components.map((c) => c.item_id), components.map((c) => c.uom_id)],
    );
    const facts = new Map(rows.map((r) => [`${r.item_id}|${r.uom_id}`, r]));
    return components.map((c) => {
      const fact = facts.get(`${c.item_id}|${c.uom_id}`)!;
      if (fact.factor === null) throw invalidState(`BOM v${bom.version_no} component ${c.line_no} uses a unit its item no longer converts`);
      const qty = toQty(c.qty_per).times(qtyPlanned).div(bom.output_qty).times(toQty(1).plus(c.scrap_factor)).times(fact.factor);
      return { itemId: c.item_id, qty: roundUp(qty, fact.decimals) };
    });
  }

  private componentsOf(ids: string[]): Promise<WoComponentRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.m.query(
      `SELECT id, work_order_id, line_no, item_id, qty_required, qty_issued, reservation_id FROM work_order_components
        WHERE tenant_id = $1 AND work_order_id = ANY($2::uuid[]) ORDER BY work_order_id, line_no`,
      [this.uow.tenantId, ids],
    );
  }
}
