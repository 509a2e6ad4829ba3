import { invalidField } from '../../common/errors';
import type { TrackingMode } from './item.entity';

/** expiryTracking 'required' needs lotTracking 'required': the expiry date lives on the lot. */
export function checkTracking(item: { lotTracking: TrackingMode; expiryTracking: TrackingMode }): void {
  if (item.expiryTracking === 'required' && item.lotTracking !== 'required') {
    throw invalidField('expiryTracking', "'required' needs lotTracking 'required'");
  }
}

/** Index of the first element whose key repeats an earlier element's, or -1. */
export function firstRepeat<T>(list: readonly T[], key: (x: T) => string): number {
  const seen = new Set<string>();
  return list.findIndex((x) => {
    const k = key(x);
    if (seen.has(k)) return true;
    seen.add(k);
    return false;
  });
}

export interface ItemChildLists {
  identifiers?: { type: string; value: string }[];
  attributes?: { name: string }[];
  uomConversions?: { uomId: string }[];
}

/**
 * The child lists of one request must be consistent in themselves: no identifier, attribute name or
 * conversion UOM twice, and no conversion for the base UOM (its factor is 1 by definition).
 */
export function checkChildLists(lists: ItemChildLists, baseUomId: string): void {
  const { identifiers = [], attributes = [], uomConversions = [] } = lists;
  let i = firstRepeat(identifiers, (x) => `${x.type}\u0000${x.value}`);
  if (i >= 0) throw invalidField(`identifiers[${i}]`, 'repeats an earlier identifier (type and value)');
  i = firstRepeat(attributes, (x) => x.name);
  if (i >= 0) throw invalidField(`attributes[${i}].name`, 'repeats an earlier attribute name');
  i = firstRepeat(uomConversions, (x) => x.uomId);
  if (i >= 0) throw invalidField(`uomConversions[${i}].uomId`, 'repeats an earlier conversion UOM');
  i = uomConversions.findIndex((x) => x.uomId === baseUomId);
  if (i >= 0) throw invalidField(`uomConversions[${i}].uomId`, 'must not be the base UOM');
}
