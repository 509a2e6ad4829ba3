import type { INestApplication } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ClsService } from 'nestjs-cls';
import type { Logger } from 'pino';
import { AppError } from '../common/errors';
import type { HttpPlatformName } from '../config/settings';
import { logRequest, PRINCIPAL, requestIdOf, RequestLine } from '../common/logging';
import type { Metrics } from '../metrics/metrics';
import type { Principal } from '../tenancy/request-context';
import type { Drain } from './drain';
import { securityHeaders } from './security-headers';

/**
 * The seam between the service and its HTTP platform (CONTRACT §10: `HTTP_PLATFORM=express|fastify`).
 * Everything that differs between Express and Fastify lives in src/http/express.ts and src/http/fastify.ts;
 * this file is what both share, and what the rest of the service may use: neutral request and response
 * types (the members Express and Fastify have in common), the Node objects under either, and the request's
 * life as both platforms run it (request id, security headers, log line, metrics). No file outside src/http
 * imports express, fastify or @nestjs/platform-* (test/platform/seam.e2e-spec.ts checks).
 */

/** A request as controllers, guards and interceptors see it: what Express's and Fastify's have in common. */
export interface HttpRequest {
  method: string;
  headers: IncomingHttpHeaders;
  /** The URL as received, query string included. */
  originalUrl: string;
  body?: unknown;
}

/** A response as controllers, guards, interceptors and the filter use it: what Express's and Fastify's have in common. */
export interface HttpResponse {
  statusCode: number;
  status(code: number): unknown;
  header(name: string, value: string): unknown;
}

/** The Node request under either platform's request object (Fastify's `request.raw`; Express's is the Node one). */
const nodeRequest = (req: object): IncomingMessage => ((req as { raw?: IncomingMessage }).raw ?? req) as IncomingMessage;

/** The Node response under either platform's response object (Fastify's `reply.raw`; Express's is the Node one). */
const nodeResponse = (res: object): ServerResponse => ((res as { raw?: ServerResponse }).raw ?? res) as ServerResponse;

/**
 * Sets a response header on either platform: on Fastify's reply (its headers go out in one `writeHead`),
 * else on the Node response (Express's is the Node one).
 */
export function setHeader(res: object, name: string, value: string | number): void {
  const text = typeof value === 'number' ? String(value) : value;
  const reply = res as { raw?: ServerResponse; header?: (name: string, value: string) => unknown };
  if (reply.raw && typeof reply.header === 'function') reply.header(name, text);
  else (res as ServerResponse).setHeader(name, text);
}

/** Leaves the request's principal for its log line (set by the access guard). */
export function notePrincipal(req: object, principal: Principal): void {
  (nodeRequest(req) as IncomingMessage & { [PRINCIPAL]?: Principal })[PRINCIPAL] = principal;
}

const FAILURE = Symbol('failure');

/** Leaves the cause of a 5xx on the response, for the request's log line (set by the exception filter). */
export function noteFailure(res: object, err: unknown): void {
  (nodeResponse(res) as ServerResponse & { [FAILURE]?: unknown })[FAILURE] = err;
}

/** helmet's headers for this service's configuration (src/http/security-headers.ts): no CSP, no COEP. */
export const SECURITY_HEADERS = securityHeaders({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false });

/** The framework's error for a path that cannot be decoded, the same on both platforms. */
export const badUrl = () => new AppError(400, 'bad_request', 'Malformed URL: it cannot be decoded');

/** What a platform needs to run requests the service's way. */
export interface HttpServices {
  logger: Logger;
  cls: ClsService;
  drain: Drain;
  /** Only with METRICS_ENABLED. */
  metrics?: Metrics;
}

/** One HTTP platform: its Nest adapter and the hooks that make requests behave as the contract says. */
export interface HttpPlatform {
  readonly name: HttpPlatformName;
  /** The Nest adapter, configured (routing rules, Node's parser errors, framework errors). */
  createAdapter(logger: Logger): AbstractHttpAdapter;
  /** The per-request hooks (drain, request id and log, security headers, request context, JSON bodies). */
  install(app: INestApplication, services: HttpServices): void;
  /** Every route served, as `METHOD /path/:param` (HEAD aside): for the OpenAPI completeness test. */
  routes(app: INestApplication): string[];
  /** Once Nest has registered every route (after `app.init()`). */
  ready(app: INestApplication): void;
}

/** The platform named by HTTP_PLATFORM; only its own packages are loaded. */
export function httpPlatform(name: HttpPlatformName): HttpPlatform {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  if (name === 'fastify') return (require('./fastify') as typeof import('./fastify')).fastifyPlatform();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('./express') as typeof import('./express')).expressPlatform();
}

/** The platform each application was built on (createApp records it). */
const platforms = new WeakMap<object, HttpPlatform>();
export const recordPlatform = (app: INestApplication, platform: HttpPlatform) => void platforms.set(app, platform);
/** Every route `app` serves, from its platform's router (`METHOD /path/:param`). */
export const servedRoutes = (app: INestApplication): string[] => platforms.get(app)?.routes(app) ?? [];

/**
 * The request's id (echoed in `X-Request-Id`) and one log line per request when it ends (`logRequest`):
 * request id, tenant, user, method, route pattern (never the raw URL with its ids), status and duration,
 * with the cause of a 5xx (`noteFailure`); and, with METRICS_ENABLED, its count and duration. The access
 * guard leaves the principal on the request (`notePrincipal`). One `close` listener per request and one
 * pino call (bench/README.md, fifth round). `routeOf` gives the matched route pattern once the response is
 * done (undefined when no route matched).
 */
export class RequestObserver {
  constructor(
    private readonly logger: Logger,
    private readonly metrics: Metrics | undefined,
  ) {}

  /** Starts observing a request; returns its id (already set as `X-Request-Id` on `res` unless `setId` is false). */
  observe(req: IncomingMessage, res: ServerResponse, routeOf: () => string | undefined, setId = true): string {
    const started = performance.now();
    const requestId = requestIdOf(req.headers);
    if (setId) res.setHeader('X-Request-Id', requestId);
    res.once('close', () => {
      const url = routeOf();
      const route = url && !url.includes('*') ? url : 'unmatched';
      const ms = performance.now() - started;
      const finished = res.writableFinished;
      if (this.metrics && finished) this.metrics.observe(req.method ?? '', route, res.statusCode, ms / 1000);
      // Probes are not logged.
      if (url === '/health' || url === '/health/live') return;
      const principal = (req as IncomingMessage & { [PRINCIPAL]?: Principal })[PRINCIPAL];
      const line: RequestLine = {
        requestId,
        tenant: principal?.tenantId,
        user: principal?.userId,
        method: req.method ?? '',
        route,
        status: res.statusCode,
        ms: Math.round(ms),
        err: (res as ServerResponse & { [FAILURE]?: unknown })[FAILURE],
      };
      logRequest(this.logger, line, !finished);
    });
    return requestId;
  }
}

