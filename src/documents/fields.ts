/** Joins a field path for error details: at('lines[0]', 'itemId') → 'lines[0].itemId'. */
export const at = (prefix: string | undefined, field: string) => (prefix ? `${prefix}.${field}` : field);

export const unique = <T>(xs: T[]): T[] => [...new Set(xs)];

/**
 * Whether an optional request field says anything: JSON `null` is the field left out (CONTRACT §1; the
 * validation pipe drops it before the services see it, this does not rely on that), and so is an empty
 * list (`serialNos: []` names no serial). Rules that refuse a field where it does not belong (stock
 * fields on a service line, serials of an item that is not serial-tracked) ask this, so they never
 * refuse a field that says nothing.
 */
export const given = (value: unknown): boolean => value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0);
