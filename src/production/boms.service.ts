import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { In } from 'typeorm';
import { documentAudit } from '../common/entity';
import { invalidState } from '../common/errors';
import { page } from '../common/pagination';
import { UnitOfWork } from '../database/unit-of-work';
import { DocumentStore, Transitions } from '../documents/document-store';
import { num, qty as toQty, sql as numeric } from '../documents/quantity';
import { CatalogRefs } from '../documents/references.sql';
import { ConvertibleItem, UomConversion } from '../documents/uom-conversion.sql';
import { Bom, BomComponent } from './bom.entity';
import { cycleRoot, lockBomActivations, nextBomVersion } from './boms.sql';
import { BomComponentDto, BomQuery, BomStatus, CreateBomDto, UpdateBomDto } from './production.dto';
import { cursorOf, newestFirst } from '../common/cursor';
import { keysetPageOf } from '../database/keyset-page';

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const BOMS = newestFirst('boms', 'b');

const bomView = (b: Bom, components: BomComponent[]) => ({
  id: b.id,
  itemId: b.itemId,
  versionNo: b.versionNo,
  status: b.status as BomStatus,
  outputQty: num(b.outputQty),
  notes: b.notes,
  components: components.map((c) => ({
    id: c.id, lineNo: c.lineNo, itemId: c.itemId, qtyPer: num(c.qtyPer), uomId: c.uomId, scrapFactor: num(c.scrapFactor),
  })),
  activatedAt: b.activatedAt,
  ...documentAudit(b),
});
export type BomView = ReturnType<typeof bomView>;

/** draft →activate→ active; activating makes the item's previously active version obsolete. PATCH is `change`. */
export const BOM = new Transitions<BomStatus, 'change' | 'activate'>('BOM', {
  change: { from: ['draft'] },
  activate: { from: ['draft'], to: 'active' },
});

interface NewComponent {
  itemId: string;
  qtyPer: Decimal;
  uomId: string;
  scrapFactor: Decimal;
}

/** Versioned bills of materials: one active version per output item, no cycles through active BOMs. */
@Injectable()
export class BomsService {
  private readonly store: DocumentStore<Bom, BomStatus, keyof typeof BOM.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
  ) {
    this.store = new DocumentStore(uow, Bom, BOM, (b) => `v${b.versionNo}`);
  }

  private get repo() {
    return this.uow.repository(Bom);
  }

  private get components() {
    return this.uow.repository(BomComponent);
  }

  /** Newest first (createdAt, then id); filters itemId, status. */
  async list(query: BomQuery) {
    const at = cursorOf(BOMS, query);
    const qb = this.repo.createQueryBuilder('b');
    if (query.itemId) qb.andWhere('b.itemId = :itemId', { itemId: query.itemId });
    if (query.status) qb.andWhere('b.status = :status', { status: query.status });
    const { rows, count, nextCursor } = await keysetPageOf(qb, BOMS, query, at);
    const components = await this.componentsOf(rows.map((r) => r.id));
    return page(rows.map((r) => bomView(r, components.filter((c) => c.bomId === r.id))), count, query, nextCursor);
  }

  async get(id: string): Promise<BomView> {
    return bomView(await this.find(id), await this.componentsOf([id]));
  }

  /** The BOM, or 404. */
  find(id: string): Promise<Bom> {
    return this.store.find(id);
  }

  /**
   * A new draft version of the item's BOM. The version number comes from a per-item counter row that
   * stays locked until commit, so versions created in parallel get 1, 2, … without a clash.
   */
  async create(dto: CreateBomDto): Promise<BomView> {
    const output = await this.refs.oneStockItem(dto.itemId, 'itemId', 'new');
    const outputQty = await this.checkOutputQty(output, dto.outputQty ?? 1);
    const components = await this.checkComponents(output.id, dto.components);
    const versionNo = await nextBomVersion(this.uow, output.id);
    const id = randomUUID();
    await this.repo.insert({
      id, itemId: output.id, versionNo, status: 'draft', outputQty: numeric(outputQty), notes: dto.notes ?? null,
      createdBy: this.uow.userId, updatedBy: this.uow.userId,
    });
    await this.writeComponents(id, components);
    return this.get(id);
  }

  /** Draft only: outputQty, notes, components (replaced). */
  async update(id: string, dto: UpdateBomDto, ifMatch?: number): Promise<BomView> {
    const b = await this.store.lockFor('change', id, ifMatch);
    if (Object.values(dto).every((v) => v === undefined)) return this.get(id);
    let outputQty = b.outputQty;
    if (dto.outputQty !== undefined) {
      const [output] = (await this.refs.items([b.itemId])).values();
      outputQty = numeric(await this.checkOutputQty(output, dto.outputQty));
    }
    if (dto.components) {
      const components = await this.checkComponents(b.itemId, dto.components);
      await this.components.delete({ bomId: id });
      await this.writeComponents(id, components);
    }
    await this.store.touch(id, {
      outputQty, notes: dto.notes !== undefined ? dto.notes : b.notes,
    });
    return this.get(id);
  }

  /**
   * draft → active; the item's active version (if any) becomes obsolete. The cycle check runs again: other
   * BOMs may have been activated since this one was written. Activations of one tenant queue on one
   * transaction-level advisory lock (taken after the BOM's row, released at COMMIT), so each one's cycle
   * check sees every activation committed before it: two activations that together would close a cycle
   * (A uses B, B uses A) cannot both pass, whatever the items. The partial unique index
   * `boms_one_active` stays the database's last word on one active version per item.
   */
  async activate(id: string, ifMatch?: number): Promise<BomView> {
    const b = await this.store.lockFor('activate', id, ifMatch);
    await lockBomActivations(this.uow);
    const components = await this.componentsOf([id]);
    await this.checkCycles(b.itemId, components.map((c) => ({ itemId: c.itemId, field: `components[${c.lineNo - 1}].itemId` })));
    // One UPDATE of the item's active version (if any): version + 1, updated_at and updated_by come with it.
    await this.repo.update({ itemId: b.itemId, status: 'active' }, { status: 'obsolete', updatedBy: this.uow.userId });
    await this.store.move(id, 'activate', { activatedAt: () => 'now()' });
    return this.get(id);
  }

  /**
   * outputQty is in the output item's base unit, so it has no more decimals than that unit allows
   * (CONTRACT §1: 0.5 of an EA item is 400 naming outputQty), checked as a component's qtyPer is.
   */
  private checkOutputQty(output: ConvertibleItem, value: number): Promise<Decimal> {
    return this.uoms.toBase(output, undefined, value, 'outputQty');
  }

  /** Components: known, active stock items (404 / 400 / 409), UOM of the item, no cycle; numbered in order. */
  private async checkComponents(outputId: string, components: BomComponentDto[]): Promise<NewComponent[]> {
    const items = await this.refs.items(components.map((c) => c.itemId));
    const checked: NewComponent[] = [];
    for (const [i, c] of components.entries()) {
      const f = `components[${i}]`;
      const item = this.refs.stockItem(items, c.itemId, `${f}.itemId`, 'new');
      await this.uoms.toBase(item, c.uomId, c.qtyPer, `${f}.qtyPer`);
      checked.push({ itemId: item.id, qtyPer: toQty(c.qtyPer), uomId: c.uomId ?? item.baseUomId, scrapFactor: toQty(c.scrapFactor ?? 0) });
    }
    await this.checkCycles(outputId, checked.map((c, i) => ({ itemId: c.itemId, field: `components[${i}].itemId` })));
    return checked;
  }

  /**
   * 409 invalid_state "cycle" when a component is the output item, or an item whose active BOM uses the
   * output item at any depth (one recursive query over the active BOMs, boms.sql.ts).
   */
  private async checkCycles(outputId: string, components: Array<{ itemId: string; field: string }>): Promise<void> {
    const direct = components.find((c) => c.itemId === outputId);
    if (direct) throw invalidState(`BOM cycle: ${direct.field} is the output item itself`);
    const root = await cycleRoot(this.uow, outputId, [...new Set(components.map((c) => c.itemId))]);
    if (root) {
      const c = components.find((x) => x.itemId === root)!;
      throw invalidState(`BOM cycle: ${c.field} is made, through active BOMs, from the output item`);
    }
  }

  /** The components as one multi-row INSERT, numbered 1, 2, … in the order given. */
  private async writeComponents(bomId: string, components: NewComponent[]): Promise<void> {
    await this.components.insert(components.map((c, i) => ({
      id: randomUUID(), bomId, lineNo: i + 1, itemId: c.itemId, qtyPer: numeric(c.qtyPer), uomId: c.uomId, scrapFactor: numeric(c.scrapFactor),
    })));
  }

  /** The components of the BOMs `ids`, by BOM, in line order. */
  componentsOf(ids: string[]): Promise<BomComponent[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.components.find({ where: { bomId: In(ids) }, order: { bomId: 'ASC', lineNo: 'ASC' } });
  }
}
