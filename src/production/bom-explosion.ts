import Decimal from 'decimal.js';
import { qty as toQty } from '../documents/quantity';

/** What the explosion needs of a BOM component (a BomComponent row fits). */
export interface ExplodedComponent {
  qtyPer: Decimal.Value;
  scrapFactor: Decimal.Value;
}

/**
 * A component's requirement for `qtyPlanned` of the output, in base units, before rounding (CONTRACT §8):
 * qtyPer × qtyPlanned / outputQty × (1 + scrapFactor), times `factor` (base units per unit of the
 * component's `uomId`). Everything is multiplied first and divided by outputQty last: the products are
 * exact within the 40 significant digits quantities are computed with, so the one division is the only
 * step that can leave a tail, and only when the true quantity has one. Dividing first turned
 * 1 / 6 × 1.5 = 0.25 into 0.2500…01, which rounding up to 3 decimals made 0.251.
 */
export function explode(c: ExplodedComponent, qtyPlanned: Decimal.Value, outputQty: Decimal.Value, factor: Decimal.Value): Decimal {
  return toQty(c.qtyPer).times(qtyPlanned).times(toQty(1).plus(c.scrapFactor)).times(factor).div(outputQty);
}
