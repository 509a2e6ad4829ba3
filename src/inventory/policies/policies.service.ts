import { Inject, Injectable, Optional } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { notFound, validationFailed, withDuplicateMessages } from '../../common/errors';
import { page } from '../../common/pagination';
import { SqlFilters } from '../../database/filters.sql';
import { assertVersion } from '../../common/versioning';
import { UnitOfWork } from '../../database/unit-of-work';
import { auditView, DocumentRow, DocumentStore, Transitions } from '../../documents/document-store';
import { num, qty as toQty, sql } from '../../documents/quantity';
import { CatalogRefs, ItemRef } from '../../documents/references.sql';
import { UomConversion } from '../../documents/uom-conversion.sql';
import { LAPSED_HOLDS } from '../ledger/lapsed.sql';
import { CreatePolicyDto, PolicyQuery, UpdatePolicyDto } from './dto/policy.dto';
import { INCOMING_SUPPLY, IncomingSupply, NO_INCOMING_SUPPLY } from './incoming-supply';
import { suggestedQty } from './reorder-math';

interface PolicyRow extends Omit<DocumentRow, 'status'> {
  item_id: string;
  facility_id: string;
  min_qty: string;
  max_qty: string;
  safety_stock: string;
  reorder_qty: string;
  lead_time_days: number;
  is_active: boolean;
}

const policyView = (p: PolicyRow) => ({
  id: p.id,
  itemId: p.item_id,
  facilityId: p.facility_id,
  minQty: num(p.min_qty),
  maxQty: num(p.max_qty),
  safetyStock: num(p.safety_stock),
  reorderQty: num(p.reorder_qty),
  leadTimeDays: p.lead_time_days,
  isActive: p.is_active,
  ...auditView(p),
});
export type PolicyView = ReturnType<typeof policyView>;

const WHAT = 'Reorder policy';
const QUANTITIES = ['minQty', 'maxQty', 'safetyStock', 'reorderQty'] as const;



/** Reorder policies per (item, facility) and the reorder suggestions they make. */
@Injectable()
export class PoliciesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
    // The open purchase-order quantity (procurement provides it; see IncomingSupply).
    @Optional() @Inject(INCOMING_SUPPLY) private readonly incoming: IncomingSupply = NO_INCOMING_SUPPLY,
  ) {
    this.store = new DocumentStore(uow, 'reorder_policies', new Transitions(WHAT, {}), () => '');
  }

  /** A policy is versioned like a document, without states. */
  private readonly store: DocumentStore<PolicyRow & { status: string }, never, never>;

  private get m() {
    return this.uow.manager;
  }

  /** Newest first (createdAt, then id); q searches the item's number and name. */
  async list(query: PolicyQuery) {
    const f = new SqlFilters(this.uow.tenantId, 'r')
      .add('r.item_id = ?', query.itemId)
      .add('r.facility_id = ?', query.facilityId)
      .search(['i.item_no', 'i.name'], query.q);
    const { rows, count } = await f.pageOf<PolicyRow>(
      this.m,
      `SELECT r.* FROM reorder_policies r JOIN items i ON i.tenant_id = r.tenant_id AND i.id = r.item_id WHERE ${f.where}`,
      'r.created_at DESC, r.id DESC',
      query,
    );
    return page(rows.map(policyView), count, query);
  }

  async get(id: string): Promise<PolicyView> {
    return policyView(await this.find(id));
  }

  async create(dto: CreatePolicyDto): Promise<PolicyView> {
    const item = await this.refs.oneStockItem(dto.itemId, 'itemId', 'new');
    await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    await this.checkQuantities(item, dto);
    const values = [dto.minQty, dto.maxQty, dto.safetyStock ?? 0, dto.reorderQty ?? 0].map((v) => sql(toQty(v)));
    const id = randomUUID();
    await withDuplicateMessages(
      { reorder_policies_tenant_id_item_id_facility_id_key: `${item.itemNo} already has a reorder policy at this facility` },
      () =>
        this.m.query(
          `INSERT INTO reorder_policies (tenant_id, id, item_id, facility_id, min_qty, max_qty, safety_stock, reorder_qty,
                                         lead_time_days, is_active, created_by, updated_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
          [this.uow.tenantId, id, item.id, dto.facilityId, ...values, dto.leadTimeDays ?? 0, dto.isActive ?? true, this.uow.userId],
        ),
    );
    return this.get(id);
  }

  /** Any field but item and facility; minQty <= maxQty is checked on the merged values. */
  async update(id: string, dto: UpdatePolicyDto, ifMatch?: number): Promise<PolicyView> {
    const p = await this.find(id, true);
    assertVersion(p.version, ifMatch);
    if (Object.values(dto).every((v) => v === undefined)) return policyView(p);
    const [item] = (await this.refs.items([p.item_id])).values();
    const merged = (given: number | undefined, stored: string) => (given === undefined ? toQty(stored) : toQty(given));
    const values = [merged(dto.minQty, p.min_qty), merged(dto.maxQty, p.max_qty), merged(dto.safetyStock, p.safety_stock), merged(dto.reorderQty, p.reorder_qty)];
    await this.checkQuantities(item, dto, values[0], values[1]);
    await this.store.touch(
      id,
      'min_qty = $4, max_qty = $5, safety_stock = $6, reorder_qty = $7, lead_time_days = $8, is_active = $9',
      [...values.map(sql), dto.leadTimeDays ?? p.lead_time_days, dto.isActive ?? p.is_active],
    );
    return this.get(id);
  }

  /**
   * Active policies whose projected quantity is below minQty + safetyStock, newest policy first:
   * projectedQty = available on hand − open unallocated reserved − allocated (inventory_positions; 0
   * without a row) + the open purchase-order quantity (IncomingSupply, in base units).
   */
  async suggestions(query: PolicyQuery) {
    const f = new SqlFilters(this.uow.tenantId, 'r').add('r.item_id = ?', query.itemId).add('r.facility_id = ?', query.facilityId);
    // Reservations that expired (and the expiry job has not released yet) hold nothing.
    const projection = `WITH ${LAPSED_HOLDS}, projection AS (
        SELECT r.id, r.item_id, r.facility_id, r.min_qty, r.max_qty, r.safety_stock, r.reorder_qty, r.created_at,
               coalesce(p.qty_available_on_hand - p.qty_reserved - p.qty_allocated, 0) + coalesce(h.allocated + h.reserved, 0)
                 + ${this.incoming.sql('r.item_id', 'r.facility_id')} AS projected_qty
          FROM reorder_policies r
          LEFT JOIN inventory_positions p ON p.tenant_id = r.tenant_id AND p.item_id = r.item_id AND p.facility_id = r.facility_id
          LEFT JOIN lapsed_holds h ON h.item_id = r.item_id AND h.facility_id = r.facility_id
         WHERE ${f.where} AND r.is_active)
      SELECT * FROM projection WHERE projected_qty < min_qty + safety_stock`;
    const { rows, count } = await f.pageOf<PolicyRow & { projected_qty: string }>(this.m, projection, 'created_at DESC, id DESC', query);
    return page(
      rows.map((r) => ({
        itemId: r.item_id,
        facilityId: r.facility_id,
        projectedQty: num(r.projected_qty),
        suggestedQty: suggestedQty(r.max_qty, r.projected_qty, r.reorder_qty).toNumber(),
      })),
      count,
      query,
    );
  }

  /** Given quantities fit the item's base unit decimals; minQty <= maxQty (of the merged values on a PATCH). */
  private async checkQuantities(
    item: ItemRef,
    given: Partial<Record<(typeof QUANTITIES)[number], number>>,
    minQty: Decimal.Value = given.minQty!,
    maxQty: Decimal.Value = given.maxQty!,
  ): Promise<void> {
    for (const field of QUANTITIES) {
      const value = given[field];
      if (value !== undefined) await this.uoms.toBase(item, undefined, value, field);
    }
    if (toQty(minQty).greaterThan(maxQty))
      throw validationFailed('minQty must not exceed maxQty', [{ field: 'minQty', message: `must not exceed maxQty (${toQty(maxQty).toFixed()})` }]);
  }

  private async find(id: string, forUpdate = false): Promise<PolicyRow> {
    const [row]: PolicyRow[] = await this.m.query(
      `SELECT * FROM reorder_policies WHERE tenant_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
      [this.uow.tenantId, id],
    );
    if (!row) throw notFound(WHAT);
    return row;
  }
}
