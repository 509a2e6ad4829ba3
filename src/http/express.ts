import type { INestApplication } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import express from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { readBody, readsBody, refusedBody } from './body';
import { clientErrorAsJson } from './drain';
import { badUrl, HttpPlatform, HttpServices, RequestObserver, SECURITY_HEADERS } from './platform';

type Request = IncomingMessage & { body?: unknown; route?: { path?: string } };
type Route = { path: string; methods: Record<string, boolean> };
type Layer = { route?: Route; grouped?: Layer[]; match(path: string): object | false };
type Router = { stack: Layer[]; handle(req: unknown, res: unknown, next: unknown): void };

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
      // Never 304 from Express's freshness check (`If-None-Match` against a document's ETag): Fastify has none.
      Object.defineProperty(instance.request, 'fresh', { configurable: true, get: () => false });
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

    ready(app: INestApplication) {
      groupRoutes(app.getHttpAdapter().getInstance() as { router: Router });
    },

    routes(app: INestApplication) {
      const stack = (app.getHttpAdapter().getInstance() as { router?: Router }).router?.stack ?? [];
      return stack
        .flatMap((layer) => layer.grouped ?? [layer])
        .flatMap((layer) =>
          layer.route
            ? Object.keys(layer.route.methods)
                .filter((m) => m !== '_all' && m !== 'head')
                .map((m) => `${m.toUpperCase()} ${layer.route!.path}`)
            : [],
        );
    },
  };
}

/** The literal start of a route path up to two segments (`/v1/items/:id` → `/v1/items`), lower-case; '' for none. */
function prefixOf(path: string): string {
  const segments = path.split('/').slice(1, 3);
  const literal: string[] = [];
  for (const s of segments) {
    if (!/^[\w.-]+$/.test(s)) break;
    literal.push(s.toLowerCase());
  }
  return literal.length ? `/${literal.join('/')}` : '';
}

/**
 * Express's router tries its routes one by one (~100 here: a regular expression each, and a deferral past
 * 100 layers). Once every route is registered, each run of consecutive routes that share their literal start
 * (a controller's: `/v1/items`) moves into a router of its own, entered only when the path starts so: about 25
 * string comparisons instead of 100 expressions before an item read reaches its route. The order of the
 * routes, their patterns, `req.route` and `req.params` are unchanged; middleware layers stay where they are.
 */
function groupRoutes(app: { router: Router }): void {
  const stack = app.router.stack;
  const grouped: Layer[] = [];
  for (let i = 0; i < stack.length; ) {
    const layer = stack[i];
    const prefix = layer.route ? prefixOf(layer.route.path) : '';
    let end = i + 1;
    if (prefix) while (end < stack.length && stack[end].route && prefixOf(stack[end].route!.path) === prefix) end++;
    if (!prefix || end - i < 2) {
      grouped.push(...stack.slice(i, end));
      i = end;
      continue;
    }
    const members = stack.slice(i, end);
    const router = express.Router({ caseSensitive: false, strict: false }) as unknown as Router;
    router.stack.push(...members);
    const LayerClass = Object.getPrototypeOf(layer).constructor as new (path: string, options: object, fn: unknown) => Layer;
    const group = new LayerClass('/', { end: false, sensitive: false, strict: false }, (req: unknown, res: unknown, next: unknown) => router.handle(req, res, next));
    group.grouped = members;
    const length = prefix.length;
    // What the router's own match of a non-ending '/' answers (router/lib/layer.js), for the prefix only.
    group.match = (path: string) => {
      if (path.length < length || (path.length > length && path.charCodeAt(length) !== 47 /* / */)) return false;
      if (path.slice(0, length).toLowerCase() !== prefix) return false;
      return { params: {}, path: '', keys: [], pattern: '/' };
    };
    grouped.push(group);
    i = end;
  }
  stack.splice(0, stack.length, ...grouped);
}
