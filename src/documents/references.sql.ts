import { Injectable } from '@nestjs/common';
import { invalidField, invalidState, unknownReference } from '../common/errors';
import { empty, GENERIC, query, Sql, sql } from '../database/sql';
import { UnitOfWork } from '../database/unit-of-work';
import { unique } from './fields';

export interface ItemRef {
  id: string;
  itemNo: string;
  kind: 'stock' | 'non_stock' | 'service';
  isActive: boolean;
  lotTracked: boolean;
  serialTracked: boolean;
  expiryTracked: boolean;
  baseUomId: string;
  /** Decimals of the base UOM: quantities in base units may not have more. */
  decimals: number;
  /** The item row's version: these facts hold while it is unchanged (UOMs do not change). */
  version: number;
}

export interface LocationRef {
  id: string;
  facilityId: string;
  code: string;
  isActive: boolean;
  /** Whether the location's facility is active. */
  facilityActive: boolean;
  /** The location row's and its facility row's versions: these facts hold while both are unchanged. */
  version: number;
  facilityVersion: number;
}

export interface FacilityRef {
  id: string;
  code: string;
  isActive: boolean;
  /** The facility row's version: these facts hold while it is unchanged. */
  version: number;
}

export interface LotRef {
  id: string;
  itemId: string;
}

export interface StatusRef {
  id: string;
  code: string;
  isAvailable: boolean;
}

/**
 * What a reference is used for. `new` work (a new document or line, a reservation, a count, an
 * adjustment) refuses inactive items, facilities and locations with 409 invalid_state; `committed`
 * work (finishing a document that already holds the reference: receiving a shipped transfer,
 * fulfilling a reservation, completing a count) does not (CONTRACT §4).
 */
export type Use = 'new' | 'committed';

/**
 * More work for a look-up statement to carry (saving a round trip): CTEs and output columns, `sql`
 * fragments with their own parameters (the tenant's included: the tag numbers them after the
 * statement's own), evaluated after the look-ups, and how to read its columns from the answer.
 */
export interface SqlRider<R> {
  /** CTEs (`name AS (…)`, comma-separated, without WITH). */
  ctes: Sql;
  /** Output columns (`(…) AS name`, comma-separated). */
  columns: Sql;
  read(row: Record<string, unknown>): R;
}

export { at, unique } from './fields';

/**
 * The catalog facts that documents and the ledger check their references against (one query per kind
 * of reference, never one per line), and the rules on them that every document shares: known in this
 * tenant (404 naming the field), of the right kind and facility (400), active for new work (409).
 */
@Injectable()
export class CatalogRefs {
  constructor(private readonly uow: UnitOfWork) {}

  /**
   * Items, share-locked until the unit of work ends: an item's tracking modes, base unit and active
   * flag cannot change (PATCH locks the item for update) while a document or posting relies on them.
   */
  async items(ids: string[]): Promise<Map<string, ItemRef>> {
    const rows: ItemRef[] = await query(this.uow.manager, itemRefs(this.uow.tenantId, unique(ids)), GENERIC);
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * What a posting checks its lines against, in one statement: the items (share-locked, as `items`), the
   * locations with their facility's active flag, and the tenant's stock statuses.
   */
  async forPosting<R = never>(
    itemIds: string[],
    locationIds: string[],
    rider?: SqlRider<R>,
  ): Promise<{ items: Map<string, ItemRef>; locations: Map<string, LocationRef>; statuses: StatusRef[]; rider?: R }> {
    const tenantId = this.uow.tenantId;
    const { items, row, ridden } = await this.withItems<{ locations: LocationRef[]; statuses: StatusRef[] }, R>(
      itemIds,
      sql`(SELECT coalesce(json_agg(l), '[]') FROM (${locationRefs(tenantId, unique(locationIds))}) l) AS locations,
       (SELECT coalesce(json_agg(s ORDER BY s.code), '[]') FROM (${statusRefs(tenantId)}) s) AS statuses`,
      rider,
    );
    return { items, locations: new Map(row.locations.map((r) => [r.id, r])), statuses: row.statuses, ...ridden };
  }

  /**
   * What `forPosting` and `forHold` look up, without their share lock: for the direct ways (DirectPostings,
   * DirectHolds) to learn the facts they check a line against in memory (PostingFacts), in a read of its own
   * before their unit of work's transaction opens (UnitOfWork.readAhead). Nothing is relied on until their
   * statement finds the rows still at these versions. Unknown ids are simply absent. `also`: more output
   * columns (`… AS name`), read from `row`.
   */
  async facts(itemId: string, place: { locationId: string } | { facilityId: string }, also: Sql = empty) {
    const tenantId = this.uow.tenantId;
    const { items, row } = await this.withItems<{ location: LocationRef | null; facility: FacilityRef | null; statuses: StatusRef[] }, never>(
      [itemId],
      sql`${'locationId' in place ? sql`(SELECT row_to_json(l) FROM (${locationRefs(tenantId, [place.locationId])}) l)` : sql`NULL::json`} AS location,
       ${'facilityId' in place ? sql`(SELECT row_to_json(f) FROM (${facilityRef(tenantId, place.facilityId)}) f)` : sql`NULL::json`} AS facility,
       (SELECT coalesce(json_agg(s ORDER BY s.code), '[]') FROM (${statusRefs(tenantId)}) s) AS statuses${also.text ? sql`, ${also}` : empty}`,
      undefined,
      false,
    );
    return { item: items.get(itemId), location: row.location ?? undefined, facility: row.facility ?? undefined, statuses: row.statuses, row };
  }

  /** One look-up statement: the items (share-locked, as `items`, unless `lock` is false) and `columns`, then the rider's CTEs and columns. */
  private async withItems<T, R>(itemIds: string[], columns: Sql, rider?: SqlRider<R>, lock = true) {
    const [row]: Array<T & { items: ItemRef[] } & Record<string, unknown>> = await query(
      this.uow.manager,
      sql`WITH i AS (${itemRefs(this.uow.tenantId, unique(itemIds), lock)})${rider ? sql`, ${rider.ctes}` : empty}
       SELECT (SELECT coalesce(json_agg(i), '[]') FROM i) AS items, ${columns}${rider ? sql`, ${rider.columns}` : empty}`,
      GENERIC,
    );
    return { items: new Map(row.items.map((r) => [r.id, r])), row, ridden: rider ? { rider: rider.read(row) } : {} };
  }

  /** A known stock item (404 / 400), active when it starts new work (409). */
  stockItem(items: Map<string, ItemRef>, id: string, field: string, use: Use): ItemRef {
    const item = items.get(id);
    if (!item) throw unknownReference(field);
    if (item.kind !== 'stock') throw invalidField(field, `is a ${item.kind} item; only stock items carry inventory`);
    if (use === 'new' && !item.isActive) throw invalidState(`Item ${item.itemNo} is inactive`);
    return item;
  }

  /** One stock item by id: `items` + `stockItem`. */
  async oneStockItem(id: string, field: string, use: Use): Promise<ItemRef> {
    return this.stockItem(await this.items([id]), id, field, use);
  }

  async locations(ids: string[]): Promise<Map<string, LocationRef>> {
    const rows: LocationRef[] = await query(this.uow.manager, locationRefs(this.uow.tenantId, unique(ids)), GENERIC);
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** A known location (404), of `facilityId` when given (400); it and its facility active for new work (409). */
  location(locations: Map<string, LocationRef>, id: string, field: string, use: Use, facilityId?: string): LocationRef {
    const loc = locations.get(id);
    if (!loc) throw unknownReference(field);
    if (facilityId && loc.facilityId !== facilityId) throw invalidField(field, 'is a location of another facility');
    if (use === 'new' && !loc.isActive) throw invalidState(`Location ${loc.code} is inactive`);
    if (use === 'new' && !loc.facilityActive) throw invalidState(`The facility of location ${loc.code} is inactive`);
    return loc;
  }

  /** A known facility (404 naming the field), active for new work (409). */
  async facility(id: string, field: string, use: Use): Promise<FacilityRef> {
    const [f]: FacilityRef[] = await query(this.uow.manager, facilityRef(this.uow.tenantId, id), GENERIC);
    return this.checkFacility(f, field, use);
  }

  /** The rules of `facility` on a facility looked up elsewhere (undefined: not found). */
  checkFacility(f: FacilityRef | undefined | null, field: string, use: Use): FacilityRef {
    if (!f) throw unknownReference(field);
    if (use === 'new' && !f.isActive) throw invalidState(`Facility ${f.code} is inactive`);
    return f;
  }

  /**
   * What a hold checks, in one statement: the item (share-locked, as `items`) and the facility, unchecked
   * (see `stockItem`, `checkFacility`); a `rider` runs after them in the same statement.
   */
  async forHold<R = never>(itemId: string, facilityId: string, rider?: SqlRider<R>): Promise<{ items: Map<string, ItemRef>; facility?: FacilityRef; rider?: R }> {
    const { items, row, ridden } = await this.withItems<{ facility: FacilityRef | null }, R>(
      [itemId],
      sql`(SELECT row_to_json(f) FROM (${facilityRef(this.uow.tenantId, facilityId)}) f) AS facility`,
      rider,
    );
    return { items, facility: row.facility ?? undefined, ...ridden };
  }

  async lots(ids: string[]): Promise<LotRef[]> {
    if (!ids.length) return [];
    return query(this.uow.manager, sql`SELECT id, item_id AS "itemId" FROM lots WHERE tenant_id = ${this.uow.tenantId} AND id = ANY(${unique(ids)}::uuid[])`);
  }

  /** Existing lots by (item, lot number), keyed `itemId|lotNo`. */
  async lotsByNumber(wanted: Array<{ itemId: string; lotNo: string }>): Promise<Map<string, string>> {
    if (!wanted.length) return new Map();
    const rows: Array<{ id: string; item_id: string; lot_no: string }> = await query(
      this.uow.manager,
      sql`SELECT id, item_id, lot_no FROM lots
        WHERE tenant_id = ${this.uow.tenantId} AND (item_id, lot_no) IN (SELECT * FROM unnest(${wanted.map((w) => w.itemId)}::uuid[], ${wanted.map((w) => w.lotNo)}::text[]))`,
    );
    return new Map(rows.map((r) => [`${r.item_id}|${r.lot_no}`, r.id]));
  }

  /** The tenant's stock statuses (a handful of rows). */
  async statuses(): Promise<StatusRef[]> {
    // Written out (not statusRefs + ORDER BY): a template of values alone keeps its text built once.
    return query(this.uow.manager, sql`SELECT id, code, is_available AS "isAvailable" FROM stock_statuses WHERE tenant_id = ${this.uow.tenantId} ORDER BY code`, GENERIC);
  }

  /** A status by id (404 naming the field), or AVAILABLE when none is given. */
  status(statuses: StatusRef[], id: string | null | undefined, field: string): StatusRef {
    const found = id ? statuses.find((s) => s.id === id) : statuses.find((s) => s.code === 'AVAILABLE');
    if (!found) throw unknownReference(field);
    return found;
  }
}

/** A known item of any kind (404 naming the field), active (409): new document lines (orders sell and buy services too). */
export function activeItem(items: Map<string, ItemRef>, id: string, field: string): ItemRef {
  const item = items.get(id);
  if (!item) throw unknownReference(field);
  if (!item.isActive) throw invalidState(`Item ${item.itemNo} is inactive`);
  return item;
}

/** Items by id, share-locked until the unit of work ends (unless `lock` is false). */
const itemRefs = (tenantId: string, ids: string[], lock = true) => sql`SELECT i.id, i.item_no AS "itemNo", i.item_kind AS kind, i.is_active AS "isActive",
       i.lot_tracking = 'required' AS "lotTracked", i.serial_tracking = 'required' AS "serialTracked",
       i.expiry_tracking = 'required' AS "expiryTracked", i.base_uom_id AS "baseUomId", u.decimals, i.version
  FROM items i JOIN uoms u ON u.tenant_id = i.tenant_id AND u.id = i.base_uom_id
 WHERE i.tenant_id = ${tenantId} AND i.id = ANY(${ids}::uuid[])
   ${lock ? sql`FOR KEY SHARE OF i` : empty}`;

/** Locations by id with their facility's active flag. */
const locationRefs = (tenantId: string, ids: string[]) => sql`SELECT l.id, l.facility_id AS "facilityId", l.code, l.is_active AS "isActive", f.is_active AS "facilityActive",
       l.version, f.version AS "facilityVersion"
  FROM locations l JOIN facilities f ON f.tenant_id = l.tenant_id AND f.id = l.facility_id
 WHERE l.tenant_id = ${tenantId} AND l.id = ANY(${ids}::uuid[])`;

/** A facility by id. */
const facilityRef = (tenantId: string, id: string) => sql`SELECT id, code, is_active AS "isActive", version FROM facilities WHERE tenant_id = ${tenantId} AND id = ${id}`;

/** The tenant's stock statuses. */
const statusRefs = (tenantId: string) => sql`SELECT id, code, is_available AS "isAvailable" FROM stock_statuses WHERE tenant_id = ${tenantId}`;
