import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { In } from 'typeorm';
import { documentAudit } from '../common/entity';
import { AppError, invalidField, invalidState, unknownReference } from '../common/errors';
import { likePattern, page } from '../common/pagination';
import { UnitOfWork } from '../database/unit-of-work';
import { DocumentStore, Transitions } from '../documents/document-store';
import { DocumentNumbers } from '../documents/numbering.sql';
import { num, qty as toQty, roundUp, sql as numeric } from '../documents/quantity';
import { CatalogRefs, ItemRef } from '../documents/references.sql';
import { LedgerService } from '../inventory/ledger/ledger.service';
import { IssueLine, PostingLine } from '../inventory/ledger/posting';
import { Bom } from './bom.entity';
import { explode } from './bom-explosion';
import { BomsService } from './boms.service';
import { CompleteWorkOrderDto, CreateWorkOrderDto, WoStatus, WorkOrderQuery } from './production.dto';
import { WorkOrder, WorkOrderComponent } from './work-order.entity';
import { componentUnits, setComponentReservations, setComponentsIssued } from './work-orders.sql';
import { cursorOf, newestFirst } from '../common/cursor';
import { keysetPageOf } from '../database/keyset-page';

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const WORK_ORDERS = newestFirst('work-orders', 'w');

const woView = (w: WorkOrder, components: WorkOrderComponent[]) => ({
  id: w.id,
  woNo: w.woNo,
  itemId: w.itemId,
  bomId: w.bomId,
  facilityId: w.facilityId,
  qtyPlanned: num(w.qtyPlanned),
  qtyCompleted: num(w.qtyCompleted),
  status: w.status as WoStatus,
  outputLocationId: w.outputLocationId,
  dueDate: w.dueDate,
  components: components.map((c) => ({
    id: c.id, lineNo: c.lineNo, itemId: c.itemId, qtyRequired: num(c.qtyRequired), qtyIssued: num(c.qtyIssued), reservationId: c.reservationId,
  })),
  transactionId: w.transactionId,
  releasedAt: w.releasedAt,
  completedAt: w.completedAt,
  ...documentAudit(w),
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
  private readonly store: DocumentStore<WorkOrder, WoStatus, keyof typeof WORK_ORDER.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly numbers: DocumentNumbers,
    private readonly ledger: LedgerService,
    private readonly boms: BomsService,
  ) {
    this.store = new DocumentStore(uow, WorkOrder, WORK_ORDER, (w) => w.woNo);
  }

  private get repo() {
    return this.uow.repository(WorkOrder);
  }

  private get components() {
    return this.uow.repository(WorkOrderComponent);
  }

  /** Newest first (createdAt, then id); filters status, itemId, facilityId; q searches woNo. */
  async list(query: WorkOrderQuery) {
    const at = cursorOf(WORK_ORDERS, query);
    const qb = this.repo.createQueryBuilder('w');
    if (query.status) qb.andWhere('w.status = :status', { status: query.status });
    if (query.itemId) qb.andWhere('w.itemId = :itemId', { itemId: query.itemId });
    if (query.facilityId) qb.andWhere('w.facilityId = :facilityId', { facilityId: query.facilityId });
    if (query.q) qb.andWhere('w.woNo ILIKE :q', { q: likePattern(query.q) });
    const { rows, count, nextCursor } = await keysetPageOf(qb, WORK_ORDERS, query, at);
    const components = await this.componentsOf(rows.map((r) => r.id));
    return page(rows.map((r) => woView(r, components.filter((c) => c.workOrderId === r.id))), count, query, nextCursor);
  }

  async get(id: string): Promise<WorkOrderView> {
    return woView(await this.store.find(id), await this.componentsOf([id]));
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
    await this.repo.insert({
      id, woNo, itemId: item.id, bomId: bom.id, facilityId: dto.facilityId, qtyPlanned: numeric(qtyPlanned), status: 'draft',
      outputLocationId: dto.outputLocationId ?? null, dueDate: dto.dueDate ?? null, createdBy: this.uow.userId, updatedBy: this.uow.userId,
    });
    // One multi-row INSERT, numbered 1, 2, … in the BOM's order.
    await this.components.insert(required.map((r, i) => ({ id: randomUUID(), workOrderId: id, lineNo: i + 1, itemId: r.itemId, qtyRequired: numeric(r.qty) })));
    return this.get(id);
  }

  /** draft → released: every component reserved at the facility, all or nothing (409 listing every shortfall). */
  async release(id: string, ifMatch?: number): Promise<WorkOrderView> {
    const w = await this.store.lockFor('release', id, ifMatch);
    // Reserved in the positions' lock order (item id), whatever the BOM's order, as a sales order's open:
    // work orders whose BOMs list the same components in opposite order queue instead of deadlocking.
    const components = (await this.componentsOf([id])).sort((a, b) => (a.itemId < b.itemId ? -1 : a.itemId > b.itemId ? 1 : a.lineNo - b.lineNo));
    const reservations = await this.ledger.reserveAll(components.map((c) => ({
      itemId: c.itemId, facilityId: w.facilityId, qty: c.qtyRequired, demandType: 'work_order' as const,
      demandId: id, demandLineId: c.id, field: `components[${c.lineNo - 1}]`,
    }))).catch((err: unknown) => {
      // A shortage lists its short components in the BOM's order (they were reserved in item order).
      if (err instanceof AppError && err.code === 'insufficient_stock' && err.details) {
        const index = (field?: string) => Number(/^components\[(\d+)\]/.exec(field ?? '')?.[1] ?? 0);
        throw new AppError(err.status, err.code, err.message, [...err.details].sort((a, b) => index(a.field) - index(b.field)));
      }
      throw err;
    });
    await setComponentReservations(this.uow, id, components.map((c) => c.id), reservations);
    await this.store.move(id, 'release', { releasedAt: () => 'now()' });
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
    const [item] = (await this.refs.items([w.itemId])).values();
    const planned = toQty(w.qtyPlanned);
    const done = dto.qtyCompleted === undefined ? planned : toQty(dto.qtyCompleted);
    if (done.gt(planned)) throw invalidField('qtyCompleted', `must not exceed qtyPlanned (${planned.toFixed()})`);
    if (done.decimalPlaces() > item.decimals) throw invalidField('qtyCompleted', `must have at most ${item.decimals} decimals (the base unit of ${item.itemNo})`);
    const locationId = dto.outputLocationId ?? w.outputLocationId;
    if (!locationId) throw invalidField('outputLocationId', 'is required: the work order has no output location');
    // Finishing released work: an output location deactivated since is not refused.
    this.refs.location(await this.refs.locations([locationId]), locationId, 'outputLocationId', 'committed', w.facilityId);
    const components = await this.componentsOf([id]);
    const componentItems = await this.refs.items(components.map((c) => c.itemId));
    const issued = components.map((c) => {
      const decimals = componentItems.get(c.itemId)!.decimals;
      const scaled = roundUp(toQty(c.qtyRequired).times(done).div(planned), decimals);
      return { c, qty: Decimal.min(scaled, toQty(c.qtyRequired)) };
    });
    // Issuing takes allocated stock: pin what is not yet allocated, earliest expiry first, for every
    // component in one pass (the holds, then all their stock, in the ledger's lock order).
    const holds = await this.ledger.lockedReservations(issued.map(({ c }) => c.reservationId!));
    await this.ledger.allocateAll(
      holds.filter((h) => h.status === 'open').map((h) => ({ reservationId: h.id, field: `components[${issued.find(({ c }) => c.reservationId === h.id)!.c.lineNo - 1}]` })),
      holds.map((h) => h.id),
    );
    const txn = await this.ledger.post({
      type: 'production',
      sourceType: 'work_order',
      sourceId: id,
      lines: [
        ...issued.map(({ c, qty }): IssueLine => ({ reservationId: c.reservationId!, qty, field: `components[${c.lineNo - 1}]` })),
        {
          itemId: w.itemId, locationId, qty: done, lotNo: dto.lotNo ?? null, expiryDate: dto.expiryDate ?? null, serialNos: dto.serialNos ?? null,
        } satisfies PostingLine,
      ],
    });
    await this.ledger.closeReservations(issued.map(({ c }) => c.reservationId!));
    await setComponentsIssued(this.uow, id, issued.map(({ c }) => c.id), issued.map(({ qty }) => numeric(qty)));
    await this.store.move(id, 'complete', { qtyCompleted: numeric(done), outputLocationId: locationId, transactionId: txn.id, completedAt: () => 'now()' });
    return this.get(id);
  }

  /** draft|released → cancelled: the component reservations still holding are cancelled (freed). */
  async cancel(id: string, ifMatch?: number): Promise<WorkOrderView> {
    await this.store.lockFor('cancel', id, ifMatch);
    const components = await this.componentsOf([id]);
    await this.ledger.releaseAll(components.flatMap((c) => (c.reservationId ? [c.reservationId] : [])), 'cancelled');
    await this.store.move(id, 'cancel');
    return this.get(id);
  }

  /** `bomId` (of this item, active) or the item's active BOM; 409 when there is none. */
  private async bomFor(item: ItemRef, bomId?: string): Promise<Bom> {
    const boms = this.uow.repository(Bom);
    if (bomId) {
      const bom = await boms.findOne({ id: bomId }, { lock: 'share' });
      if (!bom) throw unknownReference('bomId');
      if (bom.itemId !== item.id) throw invalidField('bomId', `is a BOM of another item, not of ${item.itemNo}`);
      if (bom.status !== 'active') throw invalidState(`BOM v${bom.versionNo} of ${item.itemNo} is ${bom.status}; a work order needs an active BOM`);
      return bom;
    }
    const bom = await boms.findOne({ itemId: item.id, status: 'active' }, { lock: 'share' });
    if (!bom) throw invalidState(`${item.itemNo} has no active BOM`);
    return bom;
  }

  /** Each component's requirement in base units (explode: divided by outputQty last), rounded up. */
  private async requirements(bom: Bom, qtyPlanned: Decimal): Promise<Array<{ itemId: string; qty: Decimal }>> {
    const components = await this.boms.componentsOf([bom.id]);
    const units = await componentUnits(this.uow, components);
    const facts = new Map(units.map((r) => [`${r.item_id}|${r.uom_id}`, r]));
    return components.map((c) => {
      const fact = facts.get(`${c.itemId}|${c.uomId}`)!;
      if (fact.factor === null) throw invalidState(`BOM v${bom.versionNo} component ${c.lineNo} uses a unit its item no longer converts`);
      return { itemId: c.itemId, qty: roundUp(explode(c, qtyPlanned, bom.outputQty, fact.factor), fact.decimals) };
    });
  }

  /** The components of the work orders `ids`, by work order, in line order. */
  private componentsOf(ids: string[]): Promise<WorkOrderComponent[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.components.find({ where: { workOrderId: In(ids) }, order: { workOrderId: 'ASC', lineNo: 'ASC' } });
  }
}
