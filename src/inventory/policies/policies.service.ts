import { Inject, Injectable, Optional } from '@nestjs/common';
import Decimal from 'decimal.js';
import { randomUUID } from 'node:crypto';
import { Item } from '../../catalog/items/item.entity';
import { notFound, validationFailed, withDuplicateMessages } from '../../common/errors';
import { documentAudit } from '../../common/entity';
import { likePattern, page } from '../../common/pagination';
import { UnitOfWork } from '../../database/unit-of-work';
import { num, qty as toQty, sql } from '../../documents/quantity';
import { CatalogRefs, ItemRef } from '../../documents/references.sql';
import { UomConversion } from '../../documents/uom-conversion.sql';
import { CreatePolicyDto, PolicyQuery, UpdatePolicyDto } from './dto/policy.dto';
import { INCOMING_SUPPLY, IncomingSupply, NO_INCOMING_SUPPLY } from './incoming-supply';
import { ReorderPolicy } from './policy.entity';
import { suggestionsPage } from './policies.sql';
import { suggestedQty } from './reorder-math';
import { cursorOf, newestFirst } from '../../common/cursor';
import { keysetPageOf } from '../../database/keyset-page';

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const POLICIES = newestFirst('policies', 'r');

const policyView = (p: ReorderPolicy) => ({
  id: p.id,
  itemId: p.itemId,
  facilityId: p.facilityId,
  minQty: num(p.minQty),
  maxQty: num(p.maxQty),
  safetyStock: num(p.safetyStock),
  reorderQty: num(p.reorderQty),
  leadTimeDays: p.leadTimeDays,
  isActive: p.isActive,
  ...documentAudit(p),
});
export type PolicyView = ReturnType<typeof policyView>;

const WHAT = 'Reorder policy';
const QUANTITIES = ['minQty', 'maxQty', 'safetyStock', 'reorderQty'] as const;

/** Reorder policies per (item, facility) and the reorder suggestions they make. A policy is versioned like a document, without states. */
@Injectable()
export class PoliciesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly refs: CatalogRefs,
    private readonly uoms: UomConversion,
    // The open purchase-order quantity (procurement provides it; see IncomingSupply).
    @Optional() @Inject(INCOMING_SUPPLY) private readonly incoming: IncomingSupply = NO_INCOMING_SUPPLY,
  ) {}

  private get repo() {
    return this.uow.repository(ReorderPolicy);
  }

  /** Newest first (createdAt, then id); q searches the item's number and name. */
  async list(query: PolicyQuery) {
    const at = cursorOf(POLICIES, query);
    const qb = this.repo
      .createQueryBuilder('r')
      .innerJoin(Item, 'i', 'i.tenantId = r.tenantId AND i.id = r.itemId');
    if (query.itemId) qb.where('r.itemId = :itemId', { itemId: query.itemId });
    if (query.facilityId) qb.where('r.facilityId = :facilityId', { facilityId: query.facilityId });
    if (query.q) qb.where('(i.itemNo ILIKE :q OR i.name ILIKE :q)', { q: likePattern(query.q) });
    // keysetPageOf reads with LIMIT, not take: with a join, take would first read the page's ids in a
    // query of its own (the join is one item per policy, so it cannot repeat a row).
    const { rows, count, nextCursor } = await keysetPageOf(qb, POLICIES, query, at);
    return page(rows.map(policyView), count, query, nextCursor);
  }

  async get(id: string): Promise<PolicyView> {
    return policyView(await this.find(id));
  }

  async create(dto: CreatePolicyDto): Promise<PolicyView> {
    const item = await this.refs.oneStockItem(dto.itemId, 'itemId', 'new');
    await this.refs.facility(dto.facilityId, 'facilityId', 'new');
    await this.checkQuantities(item, dto);
    const [minQty, maxQty, safetyStock, reorderQty] = [dto.minQty, dto.maxQty, dto.safetyStock ?? 0, dto.reorderQty ?? 0].map((v) => sql(toQty(v)));
    const id = randomUUID();
    await withDuplicateMessages(
      { reorder_policies_tenant_id_item_id_facility_id_key: `${item.itemNo} already has a reorder policy at this facility` },
      () =>
        this.repo.insert({
          id, itemId: item.id, facilityId: dto.facilityId, minQty, maxQty, safetyStock, reorderQty,
          leadTimeDays: dto.leadTimeDays ?? 0, isActive: dto.isActive ?? true, createdBy: this.uow.userId, updatedBy: this.uow.userId,
        }),
    );
    return this.get(id);
  }

  /** Any field but item and facility; minQty <= maxQty is checked on the merged values. */
  async update(id: string, dto: UpdatePolicyDto, ifMatch?: number): Promise<PolicyView> {
    const p = await this.repo.lockVersion(id, ifMatch, WHAT);
    if (Object.values(dto).every((v) => v === undefined)) return policyView(p);
    const [item] = (await this.refs.items([p.itemId])).values();
    const merged = (given: number | undefined, stored: string) => (given === undefined ? toQty(stored) : toQty(given));
    const values = [merged(dto.minQty, p.minQty), merged(dto.maxQty, p.maxQty), merged(dto.safetyStock, p.safetyStock), merged(dto.reorderQty, p.reorderQty)];
    await this.checkQuantities(item, dto, values[0], values[1]);
    const [minQty, maxQty, safetyStock, reorderQty] = values.map(sql);
    await this.repo.touch(id, {
      minQty, maxQty, safetyStock, reorderQty, leadTimeDays: dto.leadTimeDays ?? p.leadTimeDays, isActive: dto.isActive ?? p.isActive,
    });
    return this.get(id);
  }

  /**
   * Active policies whose projected quantity is below minQty + safetyStock, newest policy first:
   * projectedQty = available on hand − open unallocated reserved − allocated (inventory_positions; 0
   * without a row) + the open purchase-order quantity (IncomingSupply, in base units).
   */
  async suggestions(query: PolicyQuery) {
    const incoming = this.incoming.sql('r.item_id', 'r.facility_id');
    const { rows, count, nextCursor } = await suggestionsPage(this.uow.manager, this.uow.tenantId, query, incoming, query);
    return page(
      rows.map((r) => ({
        itemId: r.item_id,
        facilityId: r.facility_id,
        projectedQty: num(r.projected_qty),
        suggestedQty: suggestedQty(r.max_qty, r.projected_qty, r.reorder_qty).toNumber(),
      })),
      count,
      query,
      nextCursor,
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

  private async find(id: string): Promise<ReorderPolicy> {
    const row = await this.repo.findOne({ id });
    if (!row) throw notFound(WHAT);
    return row;
  }
}
