import type { EntityManager } from 'typeorm';
import { cursorOf, Keyset } from '../../common/cursor';
import { likePattern, PageQuery } from '../../common/pagination';
import { SqlFilters } from '../../database/filters.sql';
import { GENERIC, query, raw, Sql, sql } from '../../database/sql';
import { ItemQuery } from './dto/item-query.dto';
import type { ItemView } from './item.entity';

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

// GET /v1/items/{id} is the service's hottest read: its text (the view inlined, placeholders numbered by
// the tag) is built once here, not per call as a template with a raw part would be; a call only pairs it
// with its values, in the order of the placeholders: the tenant, then the id.
const ITEM_BY_ID = sql`SELECT ${raw(ITEM_VIEW)} FROM items i WHERE i.tenant_id = ${'tenant'} AND i.id = ${'id'}`.text;

/** One item's response (undefined: none in this tenant): one prepared statement with its generic plan. */
export async function itemView(m: EntityManager, tenantId: string, id: string): Promise<ItemView | undefined> {
  const [view]: ItemView[] = await query(m, new Sql(ITEM_BY_ID, [tenantId, id]), GENERIC);
  return view;
}

/** The items' documented order (cursor paging: src/common/cursor.ts). */
export const ITEMS = new Keyset('items', [
  { expr: 'i.created_at', column: 'createdAt', desc: true, type: 'timestamptz' },
  { expr: 'i.id', desc: true, type: 'uuid' },
]);

/** A page of items, newest first (createdAt, then id, so pages never skip or repeat a row), and their count. */
export function itemPage(m: EntityManager, tenantId: string, q: ItemQuery & PageQuery): Promise<{ rows: ItemView[]; count: number; nextCursor: string | null }> {
  const at = cursorOf(ITEMS, q);
  const f = new SqlFilters(tenantId, 'i')
    // item_search() runs the ILIKE where the trigram indexes can serve it (migration ItemSearch explains why).
    .add((v) => sql`i.id IN (SELECT id FROM item_search(${v}))`, q.q && likePattern(q.q))
    .add((v) => sql`i.item_kind = ${v}`, q.itemKind)
    .add((v) => sql`i.is_active = ${v}`, q.isActive);
  return f.pageOf<ItemView>(m, (after) => sql`SELECT ${raw(ITEM_VIEW)} FROM items i WHERE ${f.where} AND ${after}`, ITEMS, q, at);
}

/** Whether `uomId` is one of the item's conversions. */
export async function hasConversion(m: EntityManager, tenantId: string, itemId: string, uomId: string): Promise<boolean> {
  const rows: unknown[] = await query(m, sql`SELECT 1 FROM item_uom_conversions WHERE tenant_id = ${tenantId} AND item_id = ${itemId} AND uom_id = ${uomId}`);
  return rows.length > 0;
}

/** Whether the item has ledger lines (its ledger-bound fields are then fixed). */
export async function hasLedgerLines(m: EntityManager, tenantId: string, itemId: string): Promise<boolean> {
  const [{ exists }]: Array<{ exists: boolean }> = await query(
    m,
    sql`SELECT EXISTS (SELECT 1 FROM ledger_lines WHERE tenant_id = ${tenantId} AND item_id = ${itemId}) AS exists`,
  );
  return exists;
}
