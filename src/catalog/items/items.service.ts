import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityTarget } from 'typeorm';
import { invalidField, invalidState, notFound, unknownReference, withDuplicateMessages } from '../../common/errors';
import { likePattern, Page, page } from '../../common/pagination';
import { assertVersion } from '../../common/versioning';
import { UnitOfWork } from '../../database/unit-of-work';
import { Uom } from '../uoms/uom.entity';
import { CreateItemDto } from './dto/create-item.dto';
import { ItemQuery } from './dto/item-query.dto';
import { UpdateItemDto } from './dto/update-item.dto';
import { Item, ItemAttribute, ItemChild, ItemIdentifier, ItemUomConversion, ItemView, itemView } from './item.entity';
import { checkChildLists, checkTracking, ItemChildLists } from './item-rules';

/**
 * Fields the ledger depends on: once an item has ledger lines they are fixed. The contract names
 * itemNo and the tracking modes; baseUomId is fixed too, because posted quantities are in base units.
 */
const FIXED_ONCE_POSTED = ['itemNo', 'baseUomId', 'lotTracking', 'serialTracking', 'expiryTracking'] as const;

/** Unique keys a write can hit (the lists themselves are checked for repeats before writing). */
const duplicateMessages = (itemNo: string) => ({
  items_tenant_id_item_no_key: `An item with itemNo "${itemNo}" already exists`,
  item_identifiers_tenant_id_type_value_key: 'One of the identifiers (type and value) already belongs to another item',
});

type ChildDtos = Pick<CreateItemDto, 'identifiers' | 'attributes' | 'uomConversions'>;

@Injectable()
export class ItemsService {
  constructor(private readonly uow: UnitOfWork) {}

  private get items() {
    return this.uow.manager.getRepository(Item);
  }

  /** Newest first (createdAt, then id), so pages never skip or repeat a row. */
  async list(query: ItemQuery): Promise<Page<ItemView>> {
    const qb = this.items
      .createQueryBuilder('i')
      .where('i.tenantId = :tenantId', { tenantId: this.uow.tenantId })
      .orderBy('i.createdAt', 'DESC')
      .addOrderBy('i.id', 'DESC');
    // item_search() runs the ILIKE where the trigram indexes can serve it (migration ItemSearch explains why).
    if (query.q) qb.andWhere('i.id IN (SELECT id FROM item_search(:q))', { q: likePattern(query.q) });
    if (query.itemKind) qb.andWhere('i.itemKind = :itemKind', { itemKind: query.itemKind });
    if (query.isActive !== undefined) qb.andWhere('i.isActive = :isActive', { isActive: query.isActive });
    const [rows, count] = await qb.take(query.limit).skip(query.offset).getManyAndCount();
    return page(await this.views(rows), count, query);
  }

  async get(id: string): Promise<ItemView> {
    const [view] = await this.views([await this.find(id)]);
    return view;
  }

  async create(dto: CreateItemDto): Promise<ItemView> {
    const { identifiers, attributes, uomConversions, ...fields } = dto;
    const item = this.items.create({
      ...fields,
      tenantId: this.uow.tenantId,
      id: randomUUID(),
      description: fields.description ?? null,
      itemKind: fields.itemKind ?? 'stock',
      lotTracking: fields.lotTracking ?? 'none',
      serialTracking: fields.serialTracking ?? 'none',
      expiryTracking: fields.expiryTracking ?? 'none',
      isActive: fields.isActive ?? true,
      createdBy: this.uow.userId,
      updatedBy: this.uow.userId,
    });
    checkTracking(item);
    checkChildLists(dto, item.baseUomId);
    await this.checkUomsExist([{ field: 'baseUomId', id: item.baseUomId }, ...conversionRefs(uomConversions)]);
    await withDuplicateMessages(duplicateMessages(item.itemNo), async () => {
      await this.items.insert(item);
      await this.writeChildren(item.id, { identifiers, attributes, uomConversions }, false);
    });
    return this.get(item.id);
  }

  /** Applies the given fields; a given child list replaces the item's list. Version +1 per change. */
  async update(id: string, dto: UpdateItemDto, ifMatch: number | undefined): Promise<ItemView> {
    const item = await this.find(id, true);
    assertVersion(item.version, ifMatch);
    const { identifiers, attributes, uomConversions, ...given } = dto;
    const fields = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as Partial<Item>;
    const lists: ChildDtos = { identifiers, attributes, uomConversions };
    if (!Object.keys(fields).length && Object.values(lists).every((l) => l === undefined)) return this.get(id);

    const next = { ...item, ...fields };
    checkTracking(next);
    checkChildLists(lists, next.baseUomId);
    await this.checkUomsExist([
      ...(fields.baseUomId ? [{ field: 'baseUomId', id: fields.baseUomId }] : []),
      ...conversionRefs(uomConversions),
    ]);
    if (next.baseUomId !== item.baseUomId && !uomConversions) {
      const kept = (await this.childrenOf(ItemUomConversion, [id], [])).get(id) ?? [];
      if (kept.some((c) => c.uomId === next.baseUomId)) {
        throw invalidField('baseUomId', 'is one of the item\'s uomConversions; send uomConversions without it');
      }
    }
    const fixed = FIXED_ONCE_POSTED.filter((k) => next[k] !== item[k]);
    if (fixed.length && (await this.hasLedgerLines(id))) {
      throw invalidState(`${fixed.join(', ')} cannot change: the item has ledger lines`);
    }

    await withDuplicateMessages(duplicateMessages(next.itemNo), async () => {
      await this.items.update({ tenantId: this.uow.tenantId, id }, { ...fields, updatedBy: this.uow.userId });
      await this.writeChildren(id, lists, true);
    });
    return this.get(id);
  }

  private async find(id: string, forUpdate = false): Promise<Item> {
    const item = await this.items.findOne({
      where: { tenantId: this.uow.tenantId, id },
      ...(forUpdate ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    if (!item) throw notFound('Item');
    return item;
  }

  private async hasLedgerLines(itemId: string): Promise<boolean> {
    const [{ exists }] = await this.uow.manager.query(
      `SELECT EXISTS (SELECT 1 FROM ledger_lines WHERE tenant_id = $1 AND item_id = $2) AS exists`,
      [this.uow.tenantId, itemId],
    );
    return exists;
  }

  /** Referenced UOMs must exist in this tenant (another tenant's are invisible): else 404 naming the field. */
  private async checkUomsExist(refs: { field: string; id: string }[]): Promise<void> {
    if (!refs.length) return;
    const found = await this.uow.manager
      .getRepository(Uom)
      .createQueryBuilder('u')
      .select('u.id')
      .where('u.tenantId = :tenantId AND u.id = ANY(:ids)', { tenantId: this.uow.tenantId, ids: refs.map((r) => r.id) })
      .getMany();
    const ids = new Set(found.map((u) => u.id));
    const missing = refs.find((r) => !ids.has(r.id));
    if (missing) throw unknownReference(missing.field);
  }

  /** Inserts the given lists; with `replace`, a given list first removes the item's current rows. */
  private async writeChildren(itemId: string, lists: ChildDtos, replace: boolean): Promise<void> {
    await this.writeChildRows(ItemIdentifier, itemId, lists.identifiers, replace);
    await this.writeChildRows(ItemAttribute, itemId, lists.attributes, replace);
    await this.writeChildRows(ItemUomConversion, itemId, lists.uomConversions, replace);
  }

  private async writeChildRows(
    entity: EntityTarget<ItemChild>,
    itemId: string,
    rows: object[] | undefined,
    replace: boolean,
  ): Promise<void> {
    if (!rows) return;
    const tenantId = this.uow.tenantId;
    if (replace) await this.uow.manager.delete(entity, { tenantId, itemId });
    if (rows.length) {
      await this.uow.manager.insert(entity, rows.map((r) => ({ ...r, tenantId, id: randomUUID(), itemId })));
    }
  }

  /** Views of a page of items: one query per child table for the whole page, never one per item. */
  private async views(items: Item[]): Promise<ItemView[]> {
    if (!items.length) return [];
    const ids = items.map((i) => i.id);
    const identifiers = await this.childrenOf(ItemIdentifier, ids, ['type', 'value']);
    const attributes = await this.childrenOf(ItemAttribute, ids, ['name']);
    const uomConversions = await this.childrenOf(ItemUomConversion, ids, ['factor', 'uomId']);
    return items.map((i) =>
      itemView(i, {
        identifiers: identifiers.get(i.id) ?? [],
        attributes: attributes.get(i.id) ?? [],
        uomConversions: uomConversions.get(i.id) ?? [],
      }),
    );
  }

  private async childrenOf<T extends ItemChild>(
    entity: EntityTarget<T>,
    itemIds: string[],
    orderBy: (keyof T & string)[],
  ): Promise<Map<string, T[]>> {
    const qb = this.uow.manager
      .getRepository(entity)
      .createQueryBuilder('c')
      .where('c.tenantId = :tenantId AND c.itemId = ANY(:itemIds)', { tenantId: this.uow.tenantId, itemIds });
    for (const column of orderBy) qb.addOrderBy(`c.${column}`, 'ASC');
    const byItem = new Map<string, T[]>();
    for (const row of await qb.getMany()) {
      const list = byItem.get(row.itemId);
      if (list) list.push(row);
      else byItem.set(row.itemId, [row]);
    }
    return byItem;
  }
}

const conversionRefs = (conversions: ItemChildLists['uomConversions']) =>
  (conversions ?? []).map((c, i) => ({ field: `uomConversions[${i}].uomId`, id: c.uomId }));
