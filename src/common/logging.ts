import type { IncomingMessage, ServerResponse } from 'node:http';
import pino, { Logger } from 'pino';
import type { Options } from 'pino-http';
import type { Principal } from '../tenancy/request-context';

/** What the access guard leaves on the request for the request log line. */
export const PRINCIPAL = Symbol('principal');

type LoggedRequest = IncomingMessage & {
  id?: string;
  originalUrl?: string;
  baseUrl?: string;
  route?: { path?: string };
  [PRINCIPAL]?: Principal;
};

/**
 * The service's one logger (pino): JSON lines on stdout, or pretty lines in development when
 * pino-pretty (a development dependency) is installed; on stderr (`fd` 2) for failures to start.
 * Authorization headers and cookies are redacted
 * wherever they appear; tokens are never logged.
 */
export function createLogger(settings: { LOG_LEVEL: string; NODE_ENV: string }, fd: 1 | 2 = 1): Logger {
  const verbose = ['debug', 'trace'].includes(settings.LOG_LEVEL);
  const options: pino.LoggerOptions = {
    level: settings.LOG_LEVEL,
    hooks: {
      // Nest's start-up chatter (a line per module and per route) only when debugging.
      logMethod(args, method, level) {
        if (!verbose && level <= 30 && NEST_STARTUP.has((args[0] as { context?: string } | undefined)?.context ?? '')) return;
        return method.apply(this, args);
      },
    },
    base: { service: 'inventory-service' },
    redact: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'authorization', 'token'],
  };
  if (settings.NODE_ENV === 'development' && prettyInstalled()) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l', destination: fd } } });
  }
  // stdout: pino's own buffered asynchronous writer (flushed on exit); stderr, for the last words before
  // an exit, synchronous.
  return fd === 1 ? pino(options) : pino(options, pino.destination({ fd, sync: true }));
}

const NEST_STARTUP = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication']);

function prettyInstalled(): boolean {
  try {
    require.resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}

/**
 * pino-http options for one line per request when it ends: request id, tenant, user, method, route
 * pattern (never the raw URL with its ids), status and duration; 4xx at info, 5xx at error with the
 * cause (the exception filter hands it over as `res.err`).
 */
export function requestLogOptions(logger: Logger): Options {
  return {
    logger,
    genReqId: (req) => (req as LoggedRequest).id ?? '',
    quietReqLogger: true,
    quietResLogger: true,
    autoLogging: { ignore: (req) => req.url === '/health' || req.url === '/health/live' },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    customAttributeKeys: { reqId: 'requestId', responseTime: 'ms' },
    wrapSerializers: false,
    serializers: { res: () => undefined, req: () => undefined },
    customSuccessObject: (req, res, value) => ({ ...requestFields(req as LoggedRequest, res), ms: (value as { ms?: number }).ms }),
    customErrorObject: (req, res, error, value) => ({ ...requestFields(req as LoggedRequest, res), ms: (value as { ms?: number }).ms, err: error }),
    customSuccessMessage: (req, res) => `${req.method} ${routeOf(req as LoggedRequest)} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${routeOf(req as LoggedRequest)} ${res.statusCode}`,
  };
}

function requestFields(req: LoggedRequest, res: ServerResponse) {
  const principal = req[PRINCIPAL];
  return { tenant: principal?.tenantId, user: principal?.userId, method: req.method, route: routeOf(req), status: res.statusCode };
}

/** The matched route's pattern (`/v1/items/:id`); `unmatched` for a 404 no route took. */
function routeOf(req: LoggedRequest): string {
  const path = req.route?.path;
  return path && !path.includes('*') ? `${req.baseUrl ?? ''}${path}` : 'unmatched';
}
