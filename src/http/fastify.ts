import type { INestApplication } from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { toErrorBody } from '../common/exception.filter';
import { logRequest, requestIdOf } from '../common/logging';
import { BODY_LIMIT, readBody, refusedBody } from './body';
import { clientErrorAsJson } from './drain';
import { HttpPlatform, HttpServices, RequestObserver, SECURITY_HEADERS } from './platform';

/** Routes as Fastify registered them (its onRoute hook), per application. */
const registered = new WeakMap<object, string[]>();

/**
 * `HTTP_PLATFORM=fastify`: @nestjs/platform-fastify. Every request runs the onRequest hooks below, in this
 * order: drain, request id and log line, security headers, request context, JSON body check; the body is read
 * by the one catch-all content-type parser (src/http/body.ts).
 */
export function fastifyPlatform(): HttpPlatform {
  return {
    name: 'fastify',

    createAdapter(logger: Logger) {
      // The routing clients of the API know (a trailing slash and the letter case of the path do not matter),
      // no proxy trust; requests Node's HTTP parser refuses and URLs the router cannot decode get the
      // contract's error body.
      const adapter = new FastifyAdapter({
        trustProxy: false,
        bodyLimit: BODY_LIMIT,
        routerOptions: { ignoreTrailingSlash: true, caseSensitive: false, maxParamLength: 2048 },
        clientErrorHandler: clientErrorAsJson,
        // Before any hook runs: the request id, the security headers and the log line are given here.
        frameworkErrors: (error: Error, request: FastifyRequest, reply: FastifyReply) => {
          const body = toErrorBody(error);
          const requestId = requestIdOf(request.headers);
          logRequest(logger, { requestId, method: request.method, route: 'unmatched', status: body.status, ms: 0 });
          void reply.code(body.status).headers(SECURITY_HEADERS).header('X-Request-Id', requestId).send(body);
        },
      });
      const routes: string[] = [];
      const fastify = adapter.getInstance() as FastifyInstance;
      fastify.addHook('onRoute', (route) => {
        for (const method of ([] as string[]).concat(route.method)) if (method !== 'HEAD') routes.push(`${method} ${route.url}`);
      });
      registered.set(fastify, routes);
      return adapter;
    },

    install(app: INestApplication, { logger, cls, drain, metrics }: HttpServices) {
      const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
      const observer = new RequestObserver(logger, metrics);
      fastify.addHook('onRequest', (request, reply, done) => {
        // First of all: while draining, new requests are refused.
        if (drain.isDraining) {
          reply.hijack();
          return drain.refuse(reply.raw);
        }
        // The request id and the request's log line (and metrics).
        const requestId = observer.observe(request.raw, reply.raw, () => request.routeOptions.url, false);
        // Security headers by helmet, on every response. No CORS unless a gateway adds it.
        reply.headers(SECURITY_HEADERS).header('X-Request-Id', requestId);
        // The request's context (nestjs-cls: principal, unit of work), entered before anything reads or sets it;
        // a write's body must be JSON (refused before it is read).
        cls.run(() => done(refusedBody(request.method, request.headers)));
      });
      // JSON bodies as the contract has them (src/http/body.ts): Fastify's own parsers replaced by one that
      // takes every type (a write's non-JSON body was refused above) and reads the raw stream.
      fastify.removeAllContentTypeParsers();
      fastify.addContentTypeParser('*', (request: FastifyRequest, payload: FastifyRequest['raw']) => readBody(request.headers, payload));
    },

    ready() {
      // Fastify's router is a radix tree already.
    },

    routes(app: INestApplication) {
      return registered.get(app.getHttpAdapter().getInstance()) ?? [];
    },
  };
}
