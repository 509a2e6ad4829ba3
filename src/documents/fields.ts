/** Joins a field path for error details: at('lines[0]', 'itemId') → 'lines[0].itemId'. */
export const at = (prefix: string | undefined, field: string) => (prefix ? `${prefix}.${field}` : field);

export const unique = <T>(xs: T[]): T[] => [...new Set(xs)];
