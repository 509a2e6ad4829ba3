import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityTarget } from 'typeorm';
import { invalidField, invalidState, notFound, unknownReference, withDuplicateMessages } from '../../common/errors';
import { likePattern, Page, page } from '../../common/pagination';
import { SqlFilters } from '../../database/filters.sql';
import { GENERIC, prepared } from '../../database/prepared';
import { assertVersion } from '../../common/versioning';
import { UnitOfWork } from '../../database/unit-of-work';
import { Uom } from '../uoms/uom.entity';
import { CreateItemDto } from './dto/create-item.dto';
import { ItemQuery } from './dto/item-query.dto';
import { UpdateItemDto } from './dto/update-item.dto';
import { Item, ItemAttribute, ItemChild, ItemIdentifier, ItemUomConversion, ItemView } from './item.entity';
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
    return this.uow.repository(Item);
  }

  /** Newest first (createdAt, then id), so pages never skip or repeat a row. Two statements: count, then the page with children. */
  async list(query: ItemQuery): Promise<Page<ItemView>> {
    const f = new SqlFilters(this.uow.tenantId, 'i')
      // item_search() runs the ILIKE where the trigram indexes can serve it (migration ItemSearch explains why).
      .add('i.id IN (SELECT id FROM item_search(?))', query.q && likePattern(query.q))
      .add('i.item_kind = ?', query.itemKind)
      .add('i.is_active = ?', query.isActive);
    const { rows, count } = await f.pageOf<ItemView>(this.uow.manager, `SELECT ${ITEM_VIEW} FROM items i WHERE ${f.where}`, 'i.created_at DESC, i.id DESC', query);
    return page(rows, count, query);
  }

  /** `get` as the request's only statement: the unit of work's COMMIT leaves with it (one socket write). */
  read(id: string): Promise<ItemView> {
    return this.uow.commitWith(() => this.get(id));
  }

  /** One item with its identifiers, attributes and conversions: one prepared statement. */
  async get(id: string): Promise<ItemView> {
    const [view]: ItemView[] = await this.uow.manager.query(prepared(`SELECT ${ITEM_VIEW} FROM items i WHERE i.tenant_id = $1 AND i.id = $2`, GENERIC), [this.uow.tenantId, id]);
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
      const kept = await this.uow.manager.query(`SELECT 1 FROM item_uom_conversions WHERE tenant_id = $1 AND item_id = $2 AND uom_id = $3`, [
        this.uow.tenantId, id, next.baseUomId,
      ]);
      if (kept.length) {
        throw invalidField('baseUomId', 'is one of the item\'s uomConversions; send uomConversions without it');
      }
    }
    const fixed = FIXED_ONCE_POSTED.filter((k) => next[k] !== item[k]);
    if (fixed.length && (await this.hasLedgerLines(id))) {
      throw invalidState(`${fixed.join(', ')} cannot change: the item has ledger lines`);
    }

    await withDuplicateMessages(duplicateMessages(next.itemNo), async () => {
      await this.items.update({ id }, { ...fields, updatedBy: this.uow.userId });
      await this.writeChildren(id, lists, true);
    });
    return this.get(id);
  }

  private async find(id: string, forUpdate = false): Promise<Item> {
    const item = await this.items.findOne({ id }, { lock: forUpdate ? 'update' : undefined });
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

/**
 * An item's response, children included, built by PostgreSQL in the same statement that reads the item
 * (one round trip, whatever the number of items). Children in a stable order: identifiers by type and
 * value, attributes by name, conversions by factor and UOM.
 */
const ITEM_VIEW = `
  i.id, i.item_no AS "itemNo", i.name, i.description, i.item_kind AS "itemKind", i.base_uom_id AS "baseUomId",
  i.lot_tracking AS "lotTracking", i.serial_tracking AS "serialTracking", i.expiry_tracking AS "expiryTracking",
  i.is_active AS "isActive",
  coalesce((SELECT json_agg(json_build_object('type', x.type, 'value', x.value) ORDER BY x.type, x.value)
              FROM item_identifiers x WHERE x.tenant_id = i.tenant_id AND x.item_id = i.id), '[]') AS identifiers,
  coalesce((SELECT json_agg(json_build_object('name', x.name, 'value', x.value) ORDER BY x.name)
              FROM item_attributes x WHERE x.tenant_id = i.tenant_id AND x.item_id = i.id), '[]') AS attributes,
  coalesce((SELECT json_agg(json_build_object('uomId', x.uom_id, 'factor', x.factor) ORDER BY x.factor, x.uom_id)
              FROM item_uom_conversions x WHERE x.tenant_id = i.tenant_id AND x.item_id = i.id), '[]') AS "uomConversions",
  i.version, i.created_by AS "createdBy", i.updated_by AS "updatedBy", i.created_at AS "createdAt", i.updated_at AS "updatedAt"`;
