import { Injectable } from '@nestjs/common';
import { invalidField, invalidState, unknownReference } from '../../common/errors';
import { UnitOfWork } from '../../database/unit-of-work';

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
}

export interface LocationRef {
  id: string;
  facilityId: string;
  code: string;
  isActive: boolean;
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

/** Joins a field path: at('lines[0]', 'itemId') → 'lines[0].itemId'. */
export const at = (prefix: string | undefined, field: string) => (prefix ? `${prefix}.${field}` : field);

/**
 * Reads the catalog facts the ledger checks postings and holds against (one query per kind of
 * reference, never one per line), and the rules on them that every document shares.
 */
@Injectable()
export class LedgerReferences {
  constructor(private readonly uow: UnitOfWork) {}

  /**
   * The items of a posting or hold, share-locked until the unit of work ends: an item's tracking modes,
   * base unit and active flag cannot change (PATCH locks the item for update) while stock of it is being
   * posted, so what was checked here still holds at commit.
   */
  async items(ids: string[]): Promise<Map<string, ItemRef>> {
    const rows: Array<ItemRef> = await this.uow.manager.query(
      `SELECT i.id, i.item_no AS "itemNo", i.item_kind AS kind, i.is_active AS "isActive",
              i.lot_tracking = 'required' AS "lotTracked", i.serial_tracking = 'required' AS "serialTracked",
              i.expiry_tracking = 'required' AS "expiryTracked", i.base_uom_id AS "baseUomId", u.decimals
         FROM items i JOIN uoms u ON u.tenant_id = i.tenant_id AND u.id = i.base_uom_id
        WHERE i.tenant_id = $1 AND i.id = ANY($2::uuid[])
          FOR KEY SHARE OF i`,
      [this.uow.tenantId, unique(ids)],
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** The item of a posting or hold: known, a stock item, active. */
  async stockItem(id: string, field: string, items?: Map<string, ItemRef>): Promise<ItemRef> {
    const item = (items ?? (await this.items([id]))).get(id);
    if (!item) throw unknownReference(field);
    if (item.kind !== 'stock') throw invalidField(field, `is a ${item.kind} item; only stock items carry inventory`);
    if (!item.isActive) throw invalidState(`Item ${item.itemNo} is inactive`);
    return item;
  }

  async locations(ids: string[]): Promise<Map<string, LocationRef>> {
    const rows: LocationRef[] = await this.uow.manager.query(
      `SELECT id, facility_id AS "facilityId", code, is_active AS "isActive"
         FROM locations WHERE tenant_id = $1 AND id = ANY($2::uuid[])`,
      [this.uow.tenantId, unique(ids)],
    );
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** A location that exists, is active, and (when given) belongs to `facilityId`. */
  location(locations: Map<string, LocationRef>, id: string, field: string, facilityId?: string): LocationRef {
    const loc = locations.get(id);
    if (!loc) throw unknownReference(field);
    if (facilityId && loc.facilityId !== facilityId) throw invalidField(field, 'is a location of another facility');
    if (!loc.isActive) throw invalidState(`Location ${loc.code} is inactive`);
    return loc;
  }

  async lots(ids: string[]): Promise<LotRef[]> {
    if (!ids.length) return [];
    return this.uow.manager.query(`SELECT id, item_id AS "itemId" FROM lots WHERE tenant_id = $1 AND id = ANY($2::uuid[])`, [
      this.uow.tenantId,
      unique(ids),
    ]);
  }

  /** A lot named by id must exist (404 naming the field) and be a lot of `item` (400). */
  lotOfItem(lot: LotRef | undefined, item: ItemRef, field: string): LotRef {
    if (!lot) throw unknownReference(field);
    if (lot.itemId !== item.id) throw invalidField(field, `is a lot of another item, not of ${item.itemNo}`);
    return lot;
  }

  /** `lotId` of a document line or pin: required for a lot-tracked item, refused otherwise, and the item's own. */
  checkLotId(lots: LotRef[], lotId: string | null | undefined, item: ItemRef, field: string): void {
    if (item.lotTracked && !lotId) throw invalidField(field, `is required: ${item.itemNo} is lot-tracked`);
    if (!item.lotTracked && lotId) throw invalidField(field, `must be empty: ${item.itemNo} is not lot-tracked`);
    if (lotId) this.lotOfItem(lots.find((l) => l.id === lotId), item, field);
  }

  async facilityExists(id: string, field: string): Promise<void> {
    const rows = await this.uow.manager.query(`SELECT 1 FROM facilities WHERE tenant_id = $1 AND id = $2`, [this.uow.tenantId, id]);
    if (!rows.length) throw unknownReference(field);
  }

  async statuses(): Promise<StatusRef[]> {
    return this.uow.manager.query(
      `SELECT id, code, is_available AS "isAvailable" FROM stock_statuses WHERE tenant_id = $1 ORDER BY code`,
      [this.uow.tenantId],
    );
  }

  /** A status by id (404 naming the field), or AVAILABLE when none is given. */
  status(statuses: StatusRef[], id: string | undefined, field: string): StatusRef {
    const found = id ? statuses.find((s) => s.id === id) : statuses.find((s) => s.code === 'AVAILABLE');
    if (!found) throw unknownReference(field);
    return found;
  }
}

export const unique = <T>(xs: T[]): T[] => [...new Set(xs)];
