/** ISO 8601 UTC timestamp with milliseconds, as every `…At` field is written. */
export const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The `sub` of a token: what createdBy/updatedBy and postedBy record. */
export const subOf = (token: string): string => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sub;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The audit fields every mutable document carries (CONTRACT §1), as matchers to spread into an exact
 * `toEqual` shape: `version` (default 1), createdBy/updatedBy = the token's sub, createdAt/updatedAt ISO_MS.
 */
export const auditFields = (token: string, opts: { version?: number } = {}) => ({
  version: opts.version ?? 1,
  createdBy: subOf(token),
  updatedBy: subOf(token),
  createdAt: expect.stringMatching(ISO_MS),
  updatedAt: expect.stringMatching(ISO_MS),
});

/** Asserts a record's audit fields: made (and last changed) by the token's sub, at `version` (default 1). */
export function expectAudit(record: unknown, token: string, opts: { version?: number } = {}): void {
  expect(record).toMatchObject(auditFields(token, opts));
}
