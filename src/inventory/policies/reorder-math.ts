import Decimal from 'decimal.js';
import { qty as toQty } from '../../documents/quantity';

/**
 * What to order to bring a projected quantity back to maxQty: maxQty − projectedQty, rounded UP to a
 * multiple of reorderQty (the order multiple) when that is > 0; never negative (a policy whose
 * minQty + safetyStock exceeds maxQty can trigger above maxQty: nothing to order then).
 */
export function suggestedQty(maxQty: Decimal.Value, projectedQty: Decimal.Value, reorderQty: Decimal.Value): Decimal {
  const needed = Decimal.max(toQty(maxQty).minus(projectedQty), 0);
  const multiple = toQty(reorderQty);
  if (!multiple.gt(0)) return needed;
  return needed.dividedBy(multiple).ceil().times(multiple);
}
