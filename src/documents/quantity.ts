import Decimal from 'decimal.js';

/**
 * Note: decimal.js treats zero as positive (isPositive(0) is true); compare with gt(0) / lt(0).
 *
 * Exact decimal arithmetic for quantities (numeric(20,6) in the database; never floats). */
export const Qty = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
export type Qty = Decimal;

/**
 * Largest quantity (in absolute value) a request may carry (CONTRACT §1): a JSON number carries about 15
 * significant digits, so a larger one could not keep 6 exact decimals. Sums (balances) are not limited.
 */
export const MAX_QTY = 999_999_999.999999;

export const qty = (v: Decimal.Value): Decimal => new Qty(v);

/** The text sent to PostgreSQL for a numeric parameter. */
export const sql = (v: Decimal): string => v.toFixed();

/** A JSON number for a quantity read back from a numeric column ("12.500000" → 12.5). */
export const num = (v: string | number | null | undefined): number => (v === null || v === undefined ? 0 : Number(v));

/** As `num`, but a quantity not known yet (null) stays null. */
export const numOrNull = (v: string | null): number | null => (v === null ? null : Number(v));

/** Rounds up to `decimals` places (computed quantities: UOM conversion, BOM explosion). */
export const roundUp = (v: Decimal, decimals: number): Decimal => v.toDecimalPlaces(decimals, Decimal.ROUND_UP);

export const sum = (values: Decimal[]): Decimal => values.reduce((a, b) => a.plus(b), new Qty(0));
