import Decimal from 'decimal.js';
import { invalidField } from '../common/errors';
import { qty as toQty, roundUp } from './quantity';

/** The unit a document quantity is expressed in: its decimals and how many base units one of it is. */
export interface QuantityUnit {
  /** For messages, e.g. `the base unit of WIDGET-1` or `unit BOX`. */
  label: string;
  decimals: number;
  /** Base units per one of this unit (1 for the base unit). */
  factor: Decimal.Value;
}

/**
 * A quantity in `unit` → base units. The quantity may not have more decimals than its own unit
 * allows (400 naming `field`); the product is rounded UP to the base unit's decimals (CONTRACT §4:
 * computed quantities are rounded up to the decimals of the UOM they are stored in).
 */
export function convertToBase(value: Decimal.Value, unit: QuantityUnit, baseDecimals: number, field: string): Decimal {
  return roundUp(inUnit(value, unit, field).times(unit.factor), baseDecimals);
}

/** A document line as written: its quantity in its own unit and that quantity in base units. */
export interface LineQuantities {
  qty: Decimal.Value;
  qtyBase: Decimal.Value;
}

/**
 * A quantity in the unit of a document line that already committed the item → base units at the line's
 * own ratio, qtyBase / qty (as converted when the line was written), rounded UP to the base unit's
 * decimals. Multiplied before dividing, so a share that comes out exact stays exact (1 of 2 BOX written
 * as 24 base units is 12, whatever the ratio's own decimals). The quantity may not have more decimals
 * than its unit allows (400 naming `field`).
 */
export function convertAtLineRatio(value: Decimal.Value, unit: Omit<QuantityUnit, 'factor'>, line: LineQuantities, baseDecimals: number, field: string): Decimal {
  return roundUp(inUnit(value, unit, field).times(line.qtyBase).div(line.qty), baseDecimals);
}

/** `value` as an exact decimal, refused (400 naming `field`) when it has more decimals than `unit` allows. */
function inUnit(value: Decimal.Value, unit: Omit<QuantityUnit, 'factor'>, field: string): Decimal {
  const q = toQty(typeof value === 'number' ? String(value) : value);
  if (q.decimalPlaces() > unit.decimals) throw invalidField(field, `must have at most ${unit.decimals} decimals (${unit.label})`);
  return q;
}

/** The field beside `field` in the same object: sibling('lines[2].qty', 'uomId') → 'lines[2].uomId'. */
export const siblingField = (field: string, name: string): string => {
  const dot = field.lastIndexOf('.');
  return dot < 0 ? name : `${field.slice(0, dot + 1)}${name}`;
};
