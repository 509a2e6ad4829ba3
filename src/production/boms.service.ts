import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { invalidState, notFound } from '../common/errors';
import { page } from '../common/pagination';
import { SqlFilters } from '../database/filters.sql';
import { UnitOfWork } from '../database/unit-of-work';
import { auditView, DocumentRow, DocumentStore, Transitions } from '../documents/document-store';
import { num, qty as toQty, sql } from '../documents/quantity';
import { CatalogRefs } from '../documents/references.sql';
import { UomConversion } from '../documents/uom-conversion.sql';
import { BomComponentDto, BomQuery, BomStatus, CreateBomDto, UpdateBomDto } from './production.dto';

export interface BomRow extends DocumentRow {
  item_id: string;
  version_no: number;
  output_qty: string;
  notes: string | null;
  activated_at: Date | null;
}

export interface ComponentRow {
  id: string;
  bom_id: string;
  line_no: number;
  item_id: string;
  qty_per: string;
  uom_id: string;
  scrap_factor: string;
}

const BOM_COLUMNS = 'id, item_id, version_no, status, output_qty, notes, activated_at, version, created_by, updated_by, created_at, updated_at';

const bomView = (b: BomRow, components: ComponentRow[]) => ({
  id: b.id,
  itemId: b.item_id,
  versionNo: b.version_no,
  status: b.status as BomStatus,
  outputQty: num(b.output_qty),
  notes: b.notes,
  components: components.map((c) => ({
    id: c.id, lineNo: c.line_no, itemId: c.item_id, qtyPer: num(c.qty_per), uomId: c.uom_id, scrapFactor: num(c.scrap_factor),
  })),
  activatedAt: b.activated_at,
  ...auditView(b),
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
  private readonly store: DocumentStore<BomRow, BomStatus, keyof typeof BOM.table>;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
  ) {
    this.store = new DocumentStore(uow, 'boms', BOM, (b) => `v${b.version_no}`);
  }

  private get m() {
    return this.uow.manager;
  }

  /** Newest first (createdAt, then id); filters itemId, status. */
  async list(query: BomQuery) {
    const f = new SqlFilters(this.uow.tenantId).add('item_id = ?', query.itemId).add('status = ?', query.status);
    const { rows, count } = await f.pageOf<BomRow>(this.m, `SELECT ${BOM_COLUMNS} FROM boms WHERE ${f.where}`, 'created_at DESC, id DESC', query);
    const components = await this.componentsOf(rows.map((r) => r.id));
    return page(rows.map((r) => bomView(r, components.filter((c) => c.bom_id === r.id))), count, query);
  }

  async get(id: string): Promise<BomView> {
    return bomView(await this.find(id), await this.componentsOf([id]));
  }

  async find(id: string): Promise<BomRow> {
    const [row]: BomRow[] = await this.m.query(`SELECT ${BOM_COLUMNS} FROM boms WHERE tenant_id = $1 AND id = $2`, [this.uow.tenantId, id]);
    if (!row) throw notFound('BOM');
    return row;
  }

  /**
   * A new draft version of the item's BOM. The version number comes from a per-item counter row that
   * stays locked until commit, so versions created in parallel get 1, 2, … without a clash.
   */
  async create(dto: CreateBomDto): Promise<BomView> {
    const output = await this.refs.oneStockItem(dto.itemId, 'itemId', 'new');
    const components = await this.checkComponents(output.id, dto.components);
    const [{ version_no: versionNo }]: Array<{ version_no: number }> = await this.m.query(
      `INSERT INTO document_sequences AS q (tenant_id, prefix, last_value) VALUES ($1, 'BOM:' || $2, 1)
       ON CONFLICT (tenant_id, prefix) DO UPDATE SET last_value = q.last_value + 1 RETURNING last_value::int AS version_no`,
      [this.uow.tenantId, output.id],
    );
    const id = randomUUID();
    await this.m.query(
      `INSERT INTO boms (tenant_id, id, item_id, version_no, status, output_qty, notes, created_by, updated_by)
       VALUES ($1, $2, $3, $4, 'draft', $5, $6, $7, $7)`,
      [this.uow.tenantId, id, output.id, versionNo, sql(toQty(dto.outputQty ?? 1)), dto.notes ?? null, this.uow.userId],
    );
    await this.writeComponents(id, components);
    return this.get(id);
  }

  /** Draft only: outputQty, notes, components (replaced). */
  async update(id: string, dto: UpdateBomDto, ifMatch?: number): Promise<BomView> {
    const b = await this.store.lockFor('change', id, ifMatch);
    if (Object.values(dto).every((v) => v === undefined)) return this.get(id);
    if (dto.components) {
      const components = await this.checkComponents(b.item_id, dto.components);
      await this.m.query(`DELETE FROM bom_components WHERE tenant_id = $1 AND bom_id = $2`, [this.uow.tenantId, id]);
      await this.writeComponents(id, components);
    }
    await this.store.touch(id, 'output_qty = $4, notes = $5', [
      dto.outputQty !== undefined ? sql(toQty(dto.outputQty)) : b.output_qty, dto.notes !== undefined ? dto.notes : b.notes,
    ]);
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
    await this.m.query(`SELECT pg_advisory_xact_lock(hashtextextended('bom-activation:' || $1, 0))`, [this.uow.tenantId]);
    const components = await this.componentsOf([id]);
    await this.checkCycles(b.item_id, components.map((c) => ({ itemId: c.item_id, field: `components[${c.line_no - 1}].itemId` })));
    await this.m.query(
      `UPDATE boms SET status = 'obsolete', version = version + 1, updated_by = $3, updated_at = now()
        WHERE tenant_id = $1 AND item_id = $2 AND status = 'active'`,
      [this.uow.tenantId, b.item_id, this.uow.userId],
    );
    await this.store.move(id, 'activate', 'activated_at = now()');
    return this.get(id);
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
   * output item at any depth: one recursive query over the active BOMs (UNION, so a cycle already in the
   * data cannot make it loop).
   */
  private async checkCycles(outputId: string, components: Array<{ itemId: string; field: string }>): Promise<void> {
    const direct = components.find((c) => c.itemId === outputId);
    if (direct) throw invalidState(`BOM cycle: ${direct.field} is the output item itself`);
    const [hit]: Array<{ root: string }> = await this.m.query(
      `WITH RECURSIVE reach(root, item_id) AS (
         SELECT r, r FROM unnest($2::uuid[]) AS r
         UNION
         SELECT reach.root, c.item_id
           FROM reach
           JOIN boms b ON b.tenant_id = $1 AND b.item_id = reach.item_id AND b.status = 'active'
           JOIN bom_components c ON c.tenant_id = $1 AND c.bom_id = b.id)
       SELECT root FROM reach WHERE item_id = $3 LIMIT 1`,
      [this.uow.tenantId, [...new Set(components.map((c) => c.itemId))], outputId],
    );
    if (hit) {
      const c = components.find((x) => x.itemId === hit.root)!;
      throw invalidState(`BOM cycle: ${c.field} is made, through active BOMs, from the output item`);
    }
  }

  private async writeComponents(bomId: string, components: NewComponent[]): Promise<void> {
    await this.m.query(
      `INSERT INTO bom_components (tenant_id, id, bom_id, line_no, item_id, qty_per, uom_id, scrap_factor)
       SELECT $1, gen_random_uuid(), $2, k.ord, k.item_id, k.qty_per, k.uom_id, k.scrap
         FROM unnest($3::uuid[], $4::numeric[], $5::uuid[], $6::numeric[]) WITH ORDINALITY AS k(item_id, qty_per, uom_id, scrap, ord)`,
      [this.uow.tenantId, bomId, components.map((c) => c.itemId), components.map((c) => sql(c.qtyPer)), components.map((c) => c.uomId), components.map((c) => sql(c.scrapFactor))],
    );
  }

  componentsOf(ids: string[]): Promise<ComponentRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.m.query(
      `SELECT id, bom_id, line_no, item_id, qty_per, uom_id, scrap_factor FROM bom_components
        WHERE tenant_id = $1 AND bom_id = ANY($2::uuid[]) ORDER BY bom_id, line_no`,
      [this.uow.tenantId, ids],
    );
  }
}
