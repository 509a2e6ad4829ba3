/** ISO 8601 UTC timestamp with milliseconds, as every `…At` field is written. */
export const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The `sub` of a token: what createdBy/updatedBy and postedBy record. */
export const subOf = (token: string): string => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sub;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
