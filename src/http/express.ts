import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { readBody, readsBody, refusedBody } from './body';
import { clientErrorAsJson } from './drain';
import { badUrl, HttpPlatform, HttpServices, RequestObserver, SECURITY_HEADERS } from './platform';

type Request = IncomingMessage & { body?: unknown; route?: { path?: string } };
type Layer = { route?: { path: string; methods: Record<string, boolean> } };

/** Fastify's keep-alive timeout (72 s, longer than common load balancers' 60 s), kept on Express. */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * `HTTP_PLATFORM=express` (the default): @nestjs/platform-express on Express 5. No body parser but ours
 * (`bodyParser: false`) and no middleware of our own: the work every request needs runs in the request hook
 * of Nest's Express adapter (`setOnRequestHook`, in the one middleware the adapter always has), in Fastify's
 * order: drain, request id and log line, security headers, undecodable path, request context, JSON body.
 * Express's own additions are off: no `X-Powered-By`, no generated `ETag` (and so no 304 on `If-None-Match`).
 * Its routing already ignores a trailing slash and the letter case of the path (`strict routing` and
 * `case sensitive routing` off, the defaults).
 */
export function expressPlatform(): HttpPlatform {
  return {
    name: 'express',

    createAdapter() {
      const instance = express();
      instance.disable('x-powered-by');
      instance.set('etag', false);
      return new ExpressAdapter(instance);
    },

    install(app: INestApplication, { logger, cls, drain, metrics }: HttpServices) {
      const adapter = app.getHttpAdapter() as unknown as ExpressAdapter;
      const server = app.getHttpServer() as Server;
      // Requests Node's HTTP parser refuses (malformed, headers too large): the contract's error body.
      server.on('clientError', clientErrorAsJson);
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      const observer = new RequestObserver(logger, metrics);
      const names = Object.keys(SECURITY_HEADERS);
      const values = Object.values(SECURITY_HEADERS);
      const hook = (req: Request, res: ServerResponse, next: (err?: unknown) => void): void => {
        // First of all: while draining, new requests are refused.
        if (drain.isDraining) return drain.refuse(res);
        // The request id and the request's log line (and metrics); the route is known once Express matched it.
        observer.observe(req, res, () => req.route?.path);
        // Security headers by helmet, on every response. No CORS unless a gateway adds it.
        for (let i = 0; i < names.length; i++) res.setHeader(names[i], values[i]);
        // The request's context (nestjs-cls: principal, unit of work), entered before anything reads or sets it.
        cls.run(() => {
          // A path that cannot be decoded: Fastify's router refuses it before routing, so does this.
          const url = req.url ?? '/';
          const query = url.indexOf('?');
          const path = query < 0 ? url : url.slice(0, query);
          if (path.includes('%')) {
            try {
              decodeURIComponent(path);
            } catch {
              return next(badUrl());
            }
          }
          const method = req.method ?? 'GET';
          const refused = refusedBody(method, req.headers);
          if (refused) return next(refused);
          if (!readsBody(method, req.headers)) return next();
          readBody(req.headers, req).then((body) => {
            req.body = body;
            next();
          }, next);
        });
      };
      adapter.setOnRequestHook(hook as unknown as Parameters<ExpressAdapter['setOnRequestHook']>[0]);
    },

    routes(app: INestApplication) {
      const stack = ((app.getHttpAdapter().getInstance() as { router?: { stack: Layer[] } }).router?.stack ?? []) as Layer[];
      return stack.flatMap((layer) =>
        layer.route
          ? Object.keys(layer.route.methods)
              .filter((m) => m !== '_all' && m !== 'head')
              .map((m) => `${m.toUpperCase()} ${layer.route!.path}`)
          : [],
      );
    },
  };
}
