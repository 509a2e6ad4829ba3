import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { invalidField, unknownReference } from '../common/errors';
import { query, sql } from '../database/sql';
import { UnitOfWork } from '../database/unit-of-work';
import { convertToBase, siblingField } from './uom-math';

/** What a conversion needs to know about the item (an ItemRef of LedgerReferences fits). */
export interface ConvertibleItem {
  id: string;
  itemNo: string;
  /** Decimals of the item's base UOM. */
  decimals: number;
  baseUomId: string;
}

/**
 * Document quantities given in any UOM of the item (`uomId` on the line, default the base UOM) →
 * base units, which is what the ledger stores. A UOM other than the base must be one of the item's
 * `uomConversions` (1 of it = factor base units).
 */
@Injectable()
export class UomConversion {
  constructor(private readonly uow: UnitOfWork) {}

  /**
   * `field` names the quantity (e.g. `lines[0].qty`); errors about the UOM name its sibling `uomId`.
   * Unknown UOM → 404; a UOM that is not a unit of the item → 400; too many decimals for the unit the
   * quantity is expressed in → 400.
   */
  async toBase(item: ConvertibleItem, uomId: string | undefined, qty: number, field: string): Promise<Decimal> {
    const base = { label: `the base unit of ${item.itemNo}`, decimals: item.decimals, factor: 1 };
    if (!uomId || uomId === item.baseUomId) return convertToBase(qty, base, item.decimals, field);
    const uomField = siblingField(field, 'uomId');
    const [row]: Array<{ code: string; decimals: number; is_base: boolean; factor: string | null }> = await query(
      this.uow.manager,
      sql`SELECT u.code, u.decimals, u.id = i.base_uom_id AS is_base, c.factor
         FROM uoms u
         JOIN items i ON i.tenant_id = u.tenant_id AND i.id = ${item.id}
         LEFT JOIN item_uom_conversions c ON c.tenant_id = u.tenant_id AND c.item_id = i.id AND c.uom_id = u.id
        WHERE u.tenant_id = ${this.uow.tenantId} AND u.id = ${uomId}`,
    );
    if (!row) throw unknownReference(uomField);
    if (row.is_base) return convertToBase(qty, base, item.decimals, field);
    if (row.factor === null)
      throw invalidField(uomField, `is not a unit of ${item.itemNo}: use its base unit or one of its uomConversions`);
    return convertToBase(qty, { label: `unit ${row.code}`, decimals: row.decimals, factor: row.factor }, item.decimals, field);
  }
}
