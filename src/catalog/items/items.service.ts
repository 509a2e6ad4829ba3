import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityTarget } from 'typeorm';
import { invalidField, invalidState, notFound, unknownReference, withDuplicateMessages } from '../../common/errors';
import { Page, page } from '../../common/pagination';
import { UnitOfWork } from '../../database/unit-of-work';
import { Uom } from '../uoms/uom.entity';
import { CreateItemDto } from './dto/create-item.dto';
import { ItemQuery } from './dto/item-query.dto';
import { UpdateItemDto } from './dto/update-item.dto';
import { Item, ItemAttribute, ItemChild, ItemIdentifier, ItemUomConversion, ItemView } from './item.entity';
import { checkChildLists, checkTracking, ItemChildLists } from './item-rules';
import { hasConversion, hasLedgerLines, itemPage, itemView } from './items.sql';

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
    return this.uow.repository(Item);
  }

  /** Newest first (createdAt, then id), so pages never skip or repeat a row. Two statements: count, then the page with children. */
  async list(query: ItemQuery): Promise<Page<ItemView>> {
    const { rows, count, nextCursor } = await itemPage(this.uow.manager, this.uow.tenantId, query);
    return page(rows, count, query, nextCursor);
  }

  /** One item with its identifiers, attributes and conversions: one prepared statement. */
  async get(id: string): Promise<ItemView> {
    const view = await itemView(this.uow.manager, this.uow.tenantId, id);
    if (!view) throw notFound('Item');
    return view;
  }

  async create(dto: CreateItemDto): Promise<ItemView> {
    const { identifiers, attributes, uomConversions, ...fields } = dto;
    const item: Item = Object.assign(new Item(), {
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
    const item = await this.items.lockVersion(id, ifMatch, 'Item');
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
      if (await hasConversion(this.uow.manager, this.uow.tenantId, id, next.baseUomId)) {
        throw invalidField('baseUomId', 'is one of the item\'s uomConversions; send uomConversions without it');
      }
    }
    const fixed = FIXED_ONCE_POSTED.filter((k) => next[k] !== item[k]);
    if (fixed.length && (await hasLedgerLines(this.uow.manager, this.uow.tenantId, id))) {
      throw invalidState(`${fixed.join(', ')} cannot change: the item has ledger lines`);
    }

    await withDuplicateMessages(duplicateMessages(next.itemNo), async () => {
      await this.items.touch(id, fields);
      await this.writeChildren(id, lists, true);
    });
    return this.get(id);
  }

  /** Referenced UOMs must exist in this tenant (another tenant's are invisible): else 404 naming the field. */
  private async checkUomsExist(refs: { field: string; id: string }[]): Promise<void> {
    if (!refs.length) return;
    const found = await this.uow.repository(Uom).createQueryBuilder('u').select('u.id').where('u.id = ANY(:ids)', { ids: refs.map((r) => r.id) }).getMany();
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
    const repo = this.uow.repository(entity);
    if (replace) await repo.delete({ itemId });
    if (rows.length) await repo.insert(rows.map((r) => ({ ...r, id: randomUUID(), itemId })));
  }
}

const conversionRefs = (conversions: ItemChildLists['uomConversions']) =>
  (conversions ?? []).map((c, i) => ({ field: `uomConversions[${i}].uomId`, id: c.uomId }));

