import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { HelmetOptions } from 'helmet';

/**
 * The security headers every response carries, as helmet decides them for `options`: computed once, at
 * start, by running helmet's middleware against a recording response. Our configuration is the same for
 * every request, so the answer is a constant; applied per request with one `reply.headers()` instead of
 * helmet's twelve middlewares (which @fastify/helmet even rebuilds for every request).
 */
export function securityHeaders(options: Readonly<HelmetOptions>): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => void (headers[name] = String(value)),
    removeHeader: (name: string) => void delete headers[name],
  };
  let ran = false;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
    ran = true;
  });
  // helmet's middlewares are synchronous: a version that is not would leave responses without headers.
  if (!ran) throw new Error('helmet did not finish synchronously: security headers cannot be precomputed');
  return Object.freeze(headers);
}
