import type Decimal from 'decimal.js';
import { invalidField, unknownReference } from '../common/errors';
import { at } from './fields';
import type { ItemRef, LotRef } from './references.sql';

/**
 * The item tracking rules (CONTRACT §4), in one place for every document and the ledger:
 * - a lot-tracked item names its lot (by id or number) on every line; other items name none;
 * - expiry lives on the lot: a new lot of an expiry-tracked item needs an expiry date;
 * - a serial-tracked item moves in whole units with one distinct serial number per unit.
 * Errors are 400 validation_failed naming the field (`lines[2].lotNo`), or 404 for an unknown lot id.
 */

/** A line's lot reference: `lotId` and/or `lotNo`, and the expiry date of a new lot. */
export interface LotFields {
  lotId?: string | null;
  lotNo?: string | null;
  expiryDate?: string | null;
}

/**
 * A lot-tracked item needs a lot; any other item refuses lot fields. `lotField` is the name the
 * request uses for the lot (`lotNo` or `lotId`).
 */
export function checkLot(item: ItemRef, line: LotFields, prefix: string | undefined, lotField: 'lotNo' | 'lotId' = 'lotNo'): void {
  if (item.lotTracked) {
    if (!line.lotId && !line.lotNo) throw invalidField(at(prefix, lotField), `is required: ${item.itemNo} is lot-tracked`);
    return;
  }
  if (line.lotId || line.lotNo) throw invalidField(at(prefix, lotField), `must be empty: ${item.itemNo} is not lot-tracked`);
  if (line.expiryDate) throw invalidField(at(prefix, 'expiryDate'), `must be empty: ${item.itemNo} is not lot-tracked`);
}

/** A lot named by id must exist (404 naming the field) and be a lot of `item` (400). */
export function checkLotOfItem(lot: LotRef | undefined, item: ItemRef, field: string): LotRef {
  if (!lot) throw unknownReference(field);
  if (lot.itemId !== item.id) throw invalidField(field, `is a lot of another item, not of ${item.itemNo}`);
  return lot;
}

/** `lotId` of a document line or pin: the lot rule (field `lotId`), then the lot must be the item's own. */
export function checkLotId(lots: LotRef[], lotId: string | null | undefined, item: ItemRef, field: string): void {
  const dot = field.lastIndexOf('.');
  checkLot(item, { lotId }, dot < 0 ? undefined : field.slice(0, dot), 'lotId');
  if (lotId) checkLotOfItem(lots.find((l) => l.id === lotId), item, field);
}

/** A new lot of an expiry-tracked item needs its expiry date. */
export function checkNewLotExpiry(item: ItemRef, expiryDate: string | null | undefined, prefix: string | undefined): void {
  if (item.expiryTracked && !expiryDate)
    throw invalidField(at(prefix, 'expiryDate'), `is required for a new lot: ${item.itemNo} is expiry-tracked`);
}

/** A lot's expiry date, when the line states one, must be the lot's. */
export function checkLotExpiry(given: string | null | undefined, lotExpiry: string | null, prefix: string | undefined): void {
  if (given && given !== lotExpiry)
    throw invalidField(at(prefix, 'expiryDate'), `does not match the lot's expiry date (${lotExpiry ?? 'none'})`);
}

/**
 * Serial numbers of a line moving `qty` base units: none for an item that is not serial-tracked; for
 * a serial-tracked one whole units and one distinct serial per unit — or none at all when `mayPick`
 * (the serials in stock are picked when the line posts). Returns the serials.
 */
export function checkSerials(
  item: ItemRef,
  qty: Decimal,
  serialNos: string[] | null | undefined,
  prefix: string | undefined,
  options: { qtyField?: string; mayPick?: boolean } = {},
): string[] {
  const field = at(prefix, 'serialNos');
  const serials = serialNos ?? [];
  if (!item.serialTracked) {
    if (serials.length) throw invalidField(field, `must be empty: ${item.itemNo} is not serial-tracked`);
    return [];
  }
  if (!qty.isInteger()) throw invalidField(at(prefix, options.qtyField ?? 'qty'), `must be whole units: ${item.itemNo} is serial-tracked`);
  if (!serials.length && options.mayPick) return [];
  if (serials.length !== qty.abs().toNumber())
    throw invalidField(field, `must list one serial number per unit (${qty.abs().toFixed()}) of serial-tracked ${item.itemNo}`);
  if (new Set(serials).size !== serials.length) throw invalidField(field, 'must not repeat a serial number');
  return serials;
}

/** Quantities in base units may not have more decimals than the base UOM. */
export function checkBaseDecimals(item: ItemRef, qty: Decimal, field: string): void {
  if (qty.decimalPlaces() > item.decimals)
    throw invalidField(field, `must have at most ${item.decimals} decimals (the base unit of ${item.itemNo})`);
}
