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
  const q = toQty(typeof value === 'number' ? String(value) : value);
  if (q.decimalPlaces() > unit.decimals) throw invalidField(field, `must have at most ${unit.decimals} decimals (${unit.label})`);
  return roundUp(q.times(unit.factor), baseDecimals);
}

/** The field beside `field` in the same object: sibling('lines[2].qty', 'uomId') → 'lines[2].uomId'. */
export const siblingField = (field: string, name: string): string => {
  const dot = field.lastIndexOf('.');
  return dot < 0 ? name : `${field.slice(0, dot + 1)}${name}`;
};
