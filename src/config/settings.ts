import { plainToInstance, Transform } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  IsUUID,
  Matches,
  Max,
  Min,
  MinLength,
  validateSync,
} from 'class-validator';

const toBool = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : ['true', '1', 'yes'].includes(String(value).toLowerCase()) ? true
    : ['false', '0', 'no'].includes(String(value).toLowerCase()) ? false : value;
const toInt = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : /^-?\d+$/.test(String(value)) ? Number(value) : value;
const toList = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : String(value).split(',').map((s) => s.trim()).filter(Boolean);
const toNumber = ({ value }: { value: unknown }) =>
  value === undefined || value === '' ? undefined : /^\d+(\.\d+)?$/.test(String(value)) ? Number(value) : value;
const emptyToUndefined = ({ value }: { value: unknown }) => (value === '' ? undefined : value);

const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512'];

/** The HTTP platforms the service runs on (CONTRACT §10: HTTP_PLATFORM). */
export const HTTP_PLATFORMS = ['express', 'fastify'] as const;
export type HttpPlatformName = (typeof HTTP_PLATFORMS)[number];

/**
 * Every setting of the service, read from the environment (and `.env` when present).
 * Defaults here are the documented defaults (README "Configuration").
 */
export class Settings {
  @IsIn(['development', 'test', 'production'])
  NODE_ENV: 'development' | 'test' | 'production' = 'development';

  @Transform(toInt) @IsInt() @Min(0) @Max(65535)
  PORT = 3000;

  @Transform(emptyToUndefined) @IsString()
  HOST = '0.0.0.0';

  /** The NestJS HTTP platform (CONTRACT §10): Express (@nestjs/platform-express) or Fastify (@nestjs/platform-fastify). */
  @IsIn(HTTP_PLATFORMS, { message: `HTTP_PLATFORM must be ${HTTP_PLATFORMS.join(' or ')}` })
  HTTP_PLATFORM: HttpPlatformName = 'express';

  /** Unset: an embedded PostgreSQL is started with its data under EMBEDDED_PG_DIR. */
  @Transform(emptyToUndefined) @IsOptional() @IsString()
  @Matches(/^postgres(ql)?:\/\/[^\s]+$/, { message: 'DATABASE_URL must be a postgres:// or postgresql:// connection URL, e.g. postgres://user:password@host:5432/database' })
  DATABASE_URL?: string;

  @Transform(emptyToUndefined) @IsString()
  EMBEDDED_PG_DIR = '.data/postgres';

  @Transform(toInt) @IsInt() @Min(1) @Max(65535)
  EMBEDDED_PG_PORT = 5433;

  @Transform(toBool) @IsIn([true, false], { message: 'DB_MIGRATE must be true or false' })
  DB_MIGRATE = true;

  /**
   * Measured on durable commits, 2 cores (bench/README "Pool size with batches"): one tenant's adjustments
   * wait for their batch holding a connection (idle in PostgreSQL), so the pool bounds the batches: 16 made
   * 7 postings per WAL flush and twice the adjustments of 5; 32 no more than 16.
   */
  @Transform(toInt) @IsInt() @Min(1) @Max(500)
  DB_POOL_SIZE = 16;

  /** How long a request waits for a free connection before it answers 503 (milliseconds). */
  @Transform(toInt) @IsInt() @Min(100) @Max(600_000)
  DB_ACQUIRE_TIMEOUT_MS = 5000;

  /** PostgreSQL statement_timeout of the service's connections (milliseconds; 0 = none). */
  @Transform(toInt) @IsInt() @Min(0) @Max(3_600_000)
  DB_STATEMENT_TIMEOUT_MS = 8000;

  /** PostgreSQL lock_timeout: the longest one statement waits for a row lock (milliseconds; 0 = none). */
  @Transform(toInt) @IsInt() @Min(0) @Max(3_600_000)
  DB_LOCK_TIMEOUT_MS = 5000;

  /** PostgreSQL idle_in_transaction_session_timeout (milliseconds; 0 = none). */
  @Transform(toInt) @IsInt() @Min(0) @Max(3_600_000)
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS = 10000;

  /**
   * Most pool connections one tenant may hold at once (default: the pool size − 1, at least 1), so a
   * tenant whose requests are stuck cannot starve the others; its further requests wait, then get 503.
   */
  @Transform(toInt) @IsOptional() @IsInt() @Min(1) @Max(1000)
  DB_TENANT_MAX_CONNECTIONS?: number;

  /** Longest one request may take in the database, whatever its state (slow, locked, frozen): then 503 (milliseconds). */
  @Transform(toInt) @IsInt() @Min(100) @Max(3_600_000)
  DB_REQUEST_TIMEOUT_MS = 10000;

  /** Serve the OpenAPI description (`/openapi.json`) and the interactive docs (`/docs`); public. */
  @Transform(toBool) @IsIn([true, false], { message: 'OPENAPI_ENABLED must be true or false' })
  OPENAPI_ENABLED = true;

  /** Load the demo tenant into an empty database at start (development + AUTH_MODE=dev only). */
  @Transform(toBool) @IsIn([true, false], { message: 'DEMO_DATA must be true or false' })
  DEMO_DATA = true;

  /** Serve Prometheus metrics on `GET /metrics` (no token: expose it only to the scraper's network). */
  @Transform(toBool) @IsIn([true, false], { message: 'METRICS_ENABLED must be true or false' })
  METRICS_ENABLED = false;

  /**
   * Postings of one free line (adjustments) go the one-statement way when nothing stands in their way
   * (DirectPostings); `false` sends every posting the full way. The answers are the same either way
   * (test/inventory/posting-paths proves it); the switch exists for that proof and for diagnosis.
   */
  @Transform(toBool) @IsIn([true, false], { message: 'LEDGER_DIRECT_POSTINGS must be true or false' })
  LEDGER_DIRECT_POSTINGS = true;

  /**
   * Group commit of one tenant's direct postings (DirectPostings): a posting that arrives while another
   * of its tenant is in flight joins the next batch (one statement, one range of TX numbers, one COMMIT
   * and WAL flush for up to LEDGER_BATCH_MAX postings, each with its own answer); `false` posts each
   * alone, one flush each. The answers are the same either way (test/inventory/batches).
   */
  @Transform(toBool) @IsIn([true, false], { message: 'LEDGER_BATCHES must be true or false' })
  LEDGER_BATCHES = true;

  /**
   * The most direct postings in one batch (its statement's arrays). At most 64: up to there the statement
   * runs with its generic plan (key look-ups, prepared.ts GENERIC_MAX_ARRAY).
   */
  @Transform(toInt) @IsInt() @Min(1) @Max(64)
  LEDGER_BATCH_MAX = 32;

  /**
   * For measurement only (the benchmark's events-cost figure): `false` makes ledger postings write no
   * events (`transaction.posted`, `stock.changed`), which breaks the contract's guarantee that every
   * change is in the feed (§9). Never turn it off in service.
   */
  @Transform(toBool) @IsIn([true, false], { message: 'LEDGER_EVENTS must be true or false' })
  LEDGER_EVENTS = true;

  /** On SIGTERM/SIGINT, how long requests in flight may take to finish before they are cut off (milliseconds). */
  @Transform(toInt) @IsInt() @Min(0) @Max(600_000)
  SHUTDOWN_TIMEOUT_MS = 10000;

  @IsIn(['jwt', 'dev'])
  AUTH_MODE: 'jwt' | 'dev' = 'jwt';

  @Transform(emptyToUndefined) @IsOptional() @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  IDP_ISSUER_URL?: string;

  @Transform(emptyToUndefined) @IsOptional() @IsString() @MinLength(1)
  IDP_AUDIENCE?: string;

  @Transform(emptyToUndefined) @IsOptional() @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  IDP_JWKS_URI?: string;

  @Transform(toList) @IsIn(ASYMMETRIC_ALGORITHMS, {
    each: true,
    message: `IDP_ALGORITHMS must list asymmetric algorithms only (${ASYMMETRIC_ALGORITHMS.join(', ')})`,
  })
  IDP_ALGORITHMS: string[] = ['RS256'];

  @Transform(toInt) @IsInt() @Min(0) @Max(300)
  IDP_CLOCK_TOLERANCE_SECONDS = 30;

  @Transform(emptyToUndefined) @IsString()
  CLAIM_NAMESPACE = 'https://inventory.example.com/';

  @Transform(emptyToUndefined) @IsUUID()
  DEV_TENANT_ID = '00000000-0000-4000-8000-000000000001';

  @Transform(emptyToUndefined) @IsString() @MinLength(1)
  DEV_USER_ID = 'dev-user';

  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  @Transform(toInt) @IsInt() @Min(0)
  RATE_LIMIT_PER_MINUTE = 6000;

  /** How often expired reservations are released (seconds; 0 turns the job off in this process). */
  @Transform(toInt) @IsInt() @Min(0) @Max(86400)
  RESERVATION_EXPIRY_INTERVAL_SECONDS = 30;

  /** Days events are kept in the feed; the hourly retention job deletes older ones (an older cursor → 410). */
  @Transform(toInt) @IsInt() @Min(1) @Max(3650)
  EVENT_RETENTION_DAYS = 30;

  /** Run the webhook workers (first attempts from the feed, retries) in this process; `false` for instances that only serve requests. */
  @Transform(toBool) @IsIn([true, false], { message: 'WEBHOOKS_ENABLED must be true or false' })
  WEBHOOKS_ENABLED = true;

  /** How often the webhook workers look for new events and due attempts (milliseconds). */
  @Transform(toInt) @IsInt() @Min(10) @Max(60_000)
  WEBHOOK_POLL_MS = 500;

  /**
   * Host names and addresses webhooks may target although they are (or resolve to) loopback, private,
   * link-local or otherwise non-public addresses (comma list; empty by default).
   */
  @Transform(toList) @IsString({ each: true })
  WEBHOOK_ALLOWED_HOSTS: string[] = [];

  /**
   * The key that encrypts webhook secrets at rest (AES-256-GCM): base64 of 32 bytes (`openssl rand -base64 32`).
   * Required when NODE_ENV=production; elsewhere a fixed development key is used, with a warning at start.
   */
  @Transform(emptyToUndefined) @IsOptional() @IsString()
  @Matches(/^[A-Za-z0-9+/]{43}=$/, { message: 'WEBHOOK_SECRET_KEY must be base64 of 32 bytes (openssl rand -base64 32)' })
  WEBHOOK_SECRET_KEY?: string;

  /** Multiplies the retry schedule's delays (README "Webhooks"); below 1 only for tests. */
  @Transform(toNumber) @IsNumber() @Min(0.0001) @Max(1)
  WEBHOOK_BACKOFF_SCALE = 1;

  /**
   * Most attempts in flight at once in this process, and per tenant (one slow receiver cannot take them all;
   * one webhook holds at most the tenant's less one).
   */
  @Transform(toInt) @IsInt() @Min(1) @Max(1000)
  WEBHOOK_CONCURRENCY = 16;

  @Transform(toInt) @IsInt() @Min(1) @Max(1000)
  WEBHOOK_TENANT_CONCURRENCY = 8;

  /**
   * Make webhook attempts' HTTP exchanges on a thread of their own instead of the event loop that serves the
   * API: for an instance whose loop is the limit; it costs 35–40 MB of memory (README "Webhooks").
   */
  @Transform(toBool) @IsIn([true, false], { message: 'WEBHOOK_DELIVERY_THREAD must be true or false' })
  WEBHOOK_DELIVERY_THREAD = false;

  get jwksUri(): string {
    return this.IDP_JWKS_URI ?? `${this.IDP_ISSUER_URL}.well-known/jwks.json`;
  }
}

export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration: ${problems.join('; ')}`);
  }
}

/** A value as it may appear in a message: a password in a URL (`user:secret@`) masked. */
const withoutPassword = (value: string) => value.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/\s]*):[^@/\s]*@/i, (_, userinfo: string) => `${userinfo}:***@`);

/** Reads and validates the settings; throws SettingsError naming every bad or contradictory value. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  const known = Object.keys(new Settings());
  const raw: Record<string, string> = {};
  // An empty value (`PORT=` in .env, `${PORT:-}` in compose) means unset: the default applies.
  for (const key of known) if (env[key] !== undefined && env[key] !== '') raw[key] = env[key] as string;
  const settings = plainToInstance(Settings, raw, { exposeDefaultValues: true });
  const problems = validateSync(settings, { forbidUnknownValues: false }).flatMap((e) =>
    Object.values(e.constraints ?? {}).map((m) => `${e.property}=${JSON.stringify(withoutPassword(raw[e.property] ?? ''))}: ${m}`),
  );
  if (settings.AUTH_MODE === 'dev') {
    if (settings.IDP_ISSUER_URL || settings.IDP_AUDIENCE)
      problems.push('AUTH_MODE=dev is refused while IDP_ISSUER_URL or IDP_AUDIENCE is set (dev mode would silently skip token checks)');
    if (settings.NODE_ENV === 'production') problems.push('AUTH_MODE=dev is refused when NODE_ENV=production');
  } else {
    if (!settings.IDP_ISSUER_URL) problems.push('IDP_ISSUER_URL is required when AUTH_MODE=jwt');
    if (!settings.IDP_AUDIENCE) problems.push('IDP_AUDIENCE is required when AUTH_MODE=jwt');
  }
  if (settings.NODE_ENV === 'production' && !settings.WEBHOOK_SECRET_KEY)
    problems.push('WEBHOOK_SECRET_KEY is required when NODE_ENV=production (base64 of 32 bytes: openssl rand -base64 32); it encrypts webhook secrets');
  if (problems.length) throw new SettingsError(problems);
  return settings;
}
