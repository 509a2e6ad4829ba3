import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import pino, { Logger } from 'pino';
import type { LoggerService } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
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
  const options: pino.LoggerOptions = {
    level: settings.LOG_LEVEL,
    base: { service: 'inventory-service' },
    redact: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'authorization', 'token'],
  };
  if (settings.NODE_ENV === 'development' && prettyInstalled()) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { singleLine: true, translateTime: 'SYS:HH:MM:ss.l', destination: fd } } });
  }
  // stdout: pino's asynchronous writer, buffered: lines leave in writes of 4 KiB or every 100 ms, whichever
  // comes first, and at exit (a write per line cost 2-4% of a request's CPU: each wakes a libuv worker);
  // error lines are flushed at once. stderr, for the last words before an exit: synchronous.
  return fd === 1
    ? pino(options, pino.destination({ dest: 1, sync: false, minLength: LOG_BUFFER_BYTES, periodicFlush: LOG_FLUSH_MS }))
    : pino(options, pino.destination({ fd, sync: true }));
}

/** Writes what the logger holds before the process exits (a write already in flight included). */
export function flushLogSync(logger: Logger): void {
  const stream = (logger as unknown as Record<symbol, { flushSync?: () => void } | undefined>)[pino.symbols.streamSym];
  try {
    stream?.flushSync?.();
  } catch {
    logger.flush(); // a stream that cannot flush synchronously (pino-pretty's worker): as far as it goes
  }
}

const LOG_BUFFER_BYTES = 4096;
const LOG_FLUSH_MS = 100;

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
 * Express middleware, one of the first: the request id (the caller's `X-Request-Id` when sane, else a new
 * UUID, echoed in the response) and one log line per request when it ends: request id, tenant, user,
 * method, route pattern (never the raw URL with its ids), status and duration; 4xx at info, 5xx at error
 * with the cause (the exception filter hands it over as `res.err`); a response the client hung up on before
 * it was sent at warn. One `close` listener per request and one pino call: what pino-http did with two child
 * loggers and four listeners per request, at a fifth of the CPU (bench/README.md, fifth round).
 */
export function requestLog(logger: Logger) {
  // Fastify onRequest hook: `request`/`reply` are Fastify's; the guard leaves the principal on `request`,
  // the exception filter the cause on `reply` (`err`).
  return (request: FastifyRequest & { [PRINCIPAL]?: Principal }, reply: FastifyReply & { err?: unknown }, done: () => void): void => {
    const started = performance.now();
    const req = request.raw;
    const res = reply.raw;
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && given.length <= 128 && REQUEST_ID.test(given) ? given : randomUUID();
    (req as LoggedRequest).id = id;
    reply.header('X-Request-Id', id);
    res.once('close', () => {
      const url = request.routeOptions.url;
      // Probes are not logged.
      if (url === '/health' || url === '/health/live') return;
      const principal = request[PRINCIPAL];
      const route = url && !url.includes('*') ? url : 'unmatched';
      const line = {
        requestId: id,
        tenant: principal?.tenantId,
        user: principal?.userId,
        method: req.method,
        route,
        status: res.statusCode,
        ms: Math.round(performance.now() - started),
        err: reply.err,
      };
      if (!res.writableFinished) logger.warn({ ...line, aborted: true }, `${req.method} ${route} aborted by the client`);
      else if (res.statusCode >= 500 || reply.err) {
        logger.error(line, `${req.method} ${route} ${res.statusCode}`);
        logger.flush();
      } else logger.info(line, `${req.method} ${route} ${res.statusCode}`);
    });
    done();
  };
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * Nest's own messages (start-up, `new Logger(context)` in services) as lines of the same pino logger, with
 * their `context`; `logger.warn({...fields}, 'message')` merges the fields into the line, an Error is
 * logged as `err`. Nest's start-up chatter (a line per module and route) only at debug and trace.
 */
export class NestLogger implements LoggerService {
  private readonly startupChatter: boolean;

  constructor(private readonly logger: Logger) {
    this.startupChatter = ['debug', 'trace'].includes(logger.level);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.call('trace', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.call('debug', message, params);
  }
  log(message: unknown, ...params: unknown[]): void {
    this.call('info', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.call('warn', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.call('error', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.call('fatal', message, params);
  }

  /** Nest passes the context last; errors of its exception handlers come as (message, stack, context). */
  private call(level: pino.Level, message: unknown, params: unknown[]): void {
    const fields: Record<string, unknown> = {};
    let rest = params;
    if (params.length) {
      fields.context = params[params.length - 1];
      rest = params.slice(0, -1);
    }
    if (level === 'info' && !this.startupChatter && NEST_STARTUP.has(fields.context as string)) return;
    this.write(level, message, fields, rest);
    if (level === 'error' || level === 'fatal') this.logger.flush();
  }

  private write(level: pino.Level, message: unknown, fields: Record<string, unknown>, rest: unknown[]): void {
    if (message instanceof Error) fields.err = message;
    else if (typeof message === 'object' && message !== null) Object.assign(fields, message);
    else if (level === 'error' && typeof message === 'string' && rest.length === 1 && typeof rest[0] === 'string' && /\n\s*at /.test(rest[0])) {
      const err = new Error(message);
      err.stack = rest[0];
      this.logger.error({ ...fields, err });
      return;
    } else {
      this.logger[level](fields, String(message), ...rest);
      return;
    }
    this.logger[level](fields, ...(rest as [string?]));
  }
}
