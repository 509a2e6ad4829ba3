import { Injectable } from '@nestjs/common';
import Decimal from 'decimal.js';
import { invalidField, unknownReference } from '../common/errors';
import { query, sql } from '../database/sql';
import { UnitOfWork } from '../database/unit-of-work';
import { convertAtLineRatio, convertToBase, LineQuantities, siblingField } from './uom-math';

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
    const base = baseUnit(item);
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

  /**
   * A quantity in the UOM of a document line that already committed the item (a purchase-order line
   * being received, a sales-order line being shipped) → base units at the line's own ratio, not at the
   * item's current conversion: a document that committed the item finishes as it was committed (CONTRACT
   * §4, §6), even after the item's uomConversions change the factor or drop the line's unit. UOMs never
   * change, so the line's unit still decides how many decimals the quantity may have (400 naming `field`).
   */
  async toBaseOfLine(item: ConvertibleItem, line: LineQuantities & { uomId: string }, qty: number, field: string): Promise<Decimal> {
    const unit = line.uomId === item.baseUomId ? baseUnit(item) : await this.unit(line.uomId);
    return convertAtLineRatio(qty, unit, line, item.decimals, field);
  }

  /** A UOM of the tenant by id (a document line's: its foreign key keeps it there), as a unit for messages and decimals. */
  private async unit(uomId: string): Promise<{ label: string; decimals: number }> {
    const [row]: Array<{ code: string; decimals: number }> = await query(
      this.uow.manager,
      sql`SELECT code, decimals FROM uoms WHERE tenant_id = ${this.uow.tenantId} AND id = ${uomId}`,
    );
    return { label: `unit ${row.code}`, decimals: row.decimals };
  }
}

/** The item's base unit: its own decimals, one base unit each. */
const baseUnit = (item: ConvertibleItem) => ({ label: `the base unit of ${item.itemNo}`, decimals: item.decimals, factor: 1 });
