import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger, Optional } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { Metrics } from '../metrics/metrics';
import { badUrl, HttpRequest, noteFailure } from '../http/platform';
import { CONSTRAINT_ERRORS, unmappedConstraint } from './constraints';
import { AppError, constraintOf, ErrorCode, ErrorDetail, MAX_ERROR_DETAILS } from './errors';

const BY_STATUS: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'duplicate',
  412: 'version_conflict',
  413: 'payload_too_large',
  429: 'rate_limited',
  503: 'service_unavailable',
};

/**
 * SQLSTATE classes/codes meaning the database cannot serve the request now: unreachable or going away
 * (08, 57P01-3), out of connections (53300), or a limit of ours hit — statement_timeout (57014),
 * lock_timeout (55P03), idle_in_transaction_session_timeout (25P03).
 */
const UNAVAILABLE = /^(08|57P0[1-3]|53300|57014|55P03|25P03)/;
const NETWORK_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/** Data exceptions caused by a value the client sent (that validation let through): 400, not 500. */
const INVALID_INPUT: Record<string, string> = {
  '22001': 'A text value is too long',
  '22003': 'A number is out of range',
  '22007': 'A date or time value is not valid',
  '22008': 'A date or time value is out of range',
  '22021': 'Text contains a character that cannot be stored (e.g. NUL)',
  '22P05': 'Text contains a character that cannot be stored',
  '22P02': 'A value has an invalid format',
  '23502': 'A required value is missing',
};

export interface ErrorBody {
  error: ErrorCode;
  message: string;
  status: number;
  details?: ErrorDetail[];
}

/** Maps any thrown value (domain, Nest, Express, Fastify, database, unknown) to the contract's error body. */
export function toErrorBody(err: unknown): ErrorBody {
  // Nest hands the platforms' own 4xx errors over wrapped in an HttpException: mapped below by their code.
  const cause = err instanceof HttpException ? (err.cause as { code?: unknown } | undefined) : undefined;
  if (typeof cause?.code === 'string' && cause.code.startsWith('FST_ERR_')) err = cause;
  // Express's router: a path parameter that cannot be decoded (src/http/express.ts refuses such paths first).
  if (cause instanceof URIError) err = badUrl();
  if (err instanceof AppError) {
    // A 400 lists at most 50 details (CONTRACT §1); its message says how many there were.
    const details = err.details && err.status === 400 ? err.details.slice(0, MAX_ERROR_DETAILS) : err.details;
    return { error: err.code, message: err.message, status: err.status, ...(details ? { details } : {}) };
  }
  if (err instanceof HttpException) {
    const status = err.getStatus();
    const res = err.getResponse() as { message?: unknown; error?: unknown } | string;
    const raw = typeof res === 'string' ? res : res.message;
    const message = Array.isArray(raw) ? raw.join('; ') : typeof raw === 'string' ? raw : err.message;
    const code = BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'bad_request');
    return { error: code, message: status === 404 && /^Cannot /.test(message) ? `Route ${message.slice(7)} not found` : message, status };
  }
  const e = err as { statusCode?: number; code?: string; message?: string } | undefined;
  // Fastify's own errors, raised before a handler runs (reading the body, routing)
  if (e?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { error: 'payload_too_large', message: 'Request body exceeds 1 MiB', status: 413 };
  if (e?.code === 'FST_ERR_BAD_URL') return { error: 'bad_request', message: 'Malformed URL: it cannot be decoded', status: 400 };
  if (e?.code?.startsWith('FST_ERR_') && typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500)
    return { error: BY_STATUS[e.statusCode] ?? 'bad_request', message: e.message ?? 'Bad request', status: e.statusCode in BY_STATUS ? e.statusCode : 400 };
  // A compressed body that does not inflate (zlib)
  if (e?.code && /^(Z_|ERR__ERROR_)/.test(e.code))
    return { error: 'bad_request', message: `Request body could not be decompressed: ${e.message}`, status: 400 };
  const sqlState = AppError.sqlState(err);
  if (sqlState === '23505') return { error: 'duplicate', message: duplicateMessage(err), status: 409 };
  if (sqlState && sqlState in INVALID_INPUT) return invalidInput(INVALID_INPUT[sqlState], columnOf(err));
  if (sqlState === '23514' || sqlState === '23P01' || sqlState === '23503') {
    const known = CONSTRAINT_ERRORS[constraintOf(err) ?? ''];
    const mapped = known ?? unmappedConstraint(sqlState);
    if (mapped.error === 'validation_failed') return invalidInput(mapped.message, mapped.field);
    return { error: mapped.error, message: mapped.message, status: mapped.status };
  }
  if ((sqlState && UNAVAILABLE.test(sqlState)) || isNetworkError(err))
    return { error: 'service_unavailable', message: 'The database is unavailable; retry shortly', status: 503 };
  return { error: 'internal_error', message: 'Internal server error', status: 500 };
}

/** A 400 validation_failed from the database's last word: it lists details like every other (CONTRACT §2). */
function invalidInput(message: string, field?: string): ErrorBody {
  return { error: 'validation_failed', message, status: 400, details: [field ? { field, message } : { message }] };
}

/** The column a data exception names (NOT NULL), as the camelCase field a body would use. */
function columnOf(err: unknown): string | undefined {
  const e = err as { column?: unknown; driverError?: { column?: unknown } };
  const column = e.driverError?.column ?? e.column;
  return typeof column === 'string' && /^[a-z_]+$/.test(column) ? column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()) : undefined;
}

function isNetworkError(err: unknown): boolean {
  const e = err as { code?: string; message?: string; driverError?: { code?: string } } | undefined;
  const code = e?.driverError?.code ?? e?.code;
  if (code && NETWORK_ERRORS.has(code)) return true;
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/i.test(e?.message ?? '');
}

/**
 * Names the unique key from its constraint (`<table>_tenant_id_<columns>_key`). PostgreSQL leaves the
 * key's values out of the error detail on tables with row-level security, i.e. on every tenant table.
 */
function duplicateMessage(err: unknown): string {
  const e = err as { driverError?: { constraint?: string; table?: string }; constraint?: string; table?: string };
  const constraint = e.driverError?.constraint ?? e.constraint;
  const table = e.driverError?.table ?? e.table;
  const columns = constraint && table && constraint.startsWith(`${table}_`) && constraint.endsWith('_key')
    ? constraint.slice(table.length + 1, -'_key'.length).replace(/^tenant_id_/, '')
    : undefined;
  return columns ? `A record with the same ${columns.replace(/_/g, ' ')} already exists` : 'A record with the same unique key already exists';
}

/** The one exception filter: every error leaves the service as `{error, message, status, details?}`. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  catch(err: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const res = ctx.getResponse<object>();
    const req = ctx.getRequest<HttpRequest>();
    const http = this.adapterHost.httpAdapter;
    const body = toErrorBody(err);
    this.metrics?.refused(body.error, body.status);
    const constraint = AppError.sqlState(err)?.startsWith('23') ? constraintOf(err) : undefined;
    if (constraint && body.status < 500 && !(constraint in CONSTRAINT_ERRORS) && AppError.sqlState(err) !== '23505')
      this.logger.warn({ constraint, method: req?.method, url: req?.originalUrl }, `unmapped constraint ${constraint} answered ${body.status}`);
    // The request's log line (src/common/logging.ts) is written at error level with this cause.
    if (body.status >= 500 && res) noteFailure(res, err);
    else if (body.status >= 500) this.logger.error({ err }, `${body.error} outside an HTTP request`);
    if (http.isHeadersSent(res)) return;
    if (body.status === 429) http.setHeader(res, 'Retry-After', String((err as { retryAfter?: number }).retryAfter ?? 60));
    if (body.status === 503) http.setHeader(res, 'Retry-After', '1');
    if (body.status === 401) http.setHeader(res, 'WWW-Authenticate', 'Bearer');
    http.reply(res, body, body.status);
  }
}
