/** Machine-readable error codes of the contract (CONTRACT.md §2). */
export type ErrorCode =
  | 'validation_failed'
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'duplicate'
  | 'invalid_state'
  | 'insufficient_stock'
  | 'over_receipt'
  | 'idempotency_conflict'
  | 'version_conflict'
  | 'cursor_expired'
  | 'payload_too_large'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable';

/** Most details a 400 lists (CONTRACT §1); its message says how many there were in all. */
export const MAX_ERROR_DETAILS = 50;

export interface ErrorDetail {
  field?: string;
  message: string;
  [key: string]: unknown;
}

/** A domain error: the one exception filter turns it into `{error, message, status, details?}`. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
  }

  /** SQLSTATE of a database error (TypeORM wraps the driver error), if any. */
  static sqlState(err: unknown): string | undefined {
    const e = err as { code?: unknown; driverError?: { code?: unknown } } | undefined;
    const code = e?.driverError?.code ?? e?.code;
    return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  }
}

export const validationFailed = (message: string, details?: ErrorDetail[]) =>
  new AppError(400, 'validation_failed', message, details);
/** A reference in the body that exists but does not fit: one field, one reason. */
export const invalidField = (field: string, message: string) =>
  new AppError(400, 'validation_failed', `${field} ${message}`, [{ field, message }]);
export const notFound = (what: string) => new AppError(404, 'not_found', `${what} not found`);
/** An unknown id referenced in a body: 404 naming the field. */
export const unknownReference = (field: string) =>
  new AppError(404, 'not_found', `${field} refers to a record that does not exist`, [{ field, message: 'not found' }]);
export const duplicate = (message: string) => new AppError(409, 'duplicate', message);
export const invalidState = (message: string) => new AppError(409, 'invalid_state', message);
export const insufficientStock = (message: string, details?: ErrorDetail[]) =>
  new AppError(409, 'insufficient_stock', message, details);
export const versionConflict = (current: number) =>
  new AppError(412, 'version_conflict', `The document is at version ${current}; reload it and retry`);

/** Throws 412 version_conflict when the caller's If-Match is not the document's current version. */
export function assertVersion(current: number, ifMatch: number | undefined): void {
  if (ifMatch !== undefined && ifMatch !== current) throw versionConflict(current);
}

/**
 * Runs `write`, turning a unique violation of one of the named constraints into 409 duplicate with the
 * given message. Needed because under row-level security Postgres leaves the key values out of the
 * error, so the generic mapping can only name the key's columns ("a record with the same code already exists").
 */
export async function withDuplicateMessages<T>(messages: Record<string, string>, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    const constraint = constraintOf(err);
    if (AppError.sqlState(err) === '23505' && constraint && messages[constraint]) {
      throw duplicate(messages[constraint]);
    }
    throw err;
  }
}

/** The name of the constraint a database error names, if any. */
export function constraintOf(err: unknown): string | undefined {
  const e = err as { constraint?: unknown; driverError?: { constraint?: unknown } } | undefined;
  const name = e?.driverError?.constraint ?? e?.constraint;
  return typeof name === 'string' ? name : undefined;
}
