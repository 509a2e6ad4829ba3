import type { IncomingHttpHeaders } from 'node:http';
import pino, { Logger } from 'pino';
import type { LoggerService } from '@nestjs/common';
import { randomUUID } from 'node:crypto';

/** What the access guard leaves on the request for the request log line (src/http/platform.ts). */
export const PRINCIPAL = Symbol('principal');

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

/** The request's id: the caller's `X-Request-Id` when sane, else a new UUID. */
export function requestIdOf(headers: IncomingHttpHeaders): string {
  const given = headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** One request's log line. */
export interface RequestLine {
  requestId: string;
  tenant?: string;
  user?: string;
  method: string;
  route: string;
  status: number;
  ms: number;
  err?: unknown;
}

/** Writes a request's line: 4xx at info, 5xx (or with a cause) at error and flushed, an abandoned one at warn. */
export function logRequest(logger: Logger, line: RequestLine, aborted = false): void {
  const msg = `${line.method} ${line.route}`;
  if (aborted) logger.warn({ ...line, aborted: true }, `${msg} aborted by the client`);
  else if (line.status >= 500 || line.err) {
    logger.error(line, `${msg} ${line.status}`);
    logger.flush();
  } else logger.info(line, `${msg} ${line.status}`);
}

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
