import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { ClsService } from 'nestjs-cls';
import type { Logger as PinoLogger } from 'pino';
import { AppModule } from './app.module';
import { documentIdempotencyKey } from './common/idempotency';
import { completeDocument } from './common/openapi';
import { toErrorBody } from './common/exception.filter';
import { BODY_LIMIT, installJsonBody, requireJsonBody } from './common/json-body';
import { createLogger, logRequest, NestLogger, requestIdOf, requestLog } from './common/logging';
import { securityHeaders } from './common/security-headers';
import { Settings } from './config/settings';
import { DatabaseConnector } from './database/connector';
import { Metrics } from './metrics/metrics';
import { SERVICE_NAME, SERVICE_VERSION } from './health/health.controller';
import { clientErrorAsJson, Drain, drains } from './shutdown';
import { RESPONSE_CLASSES } from './common/responses';

/** helmet's headers for this service's configuration (src/common/security-headers.ts). */
const SECURITY = securityHeaders({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false });

/** Builds the application (used by main.ts and by the e2e tests): migrated, documented, not yet listening. */
export async function createApp(settings: Settings, databaseUrl: string, logger: PinoLogger = createLogger(settings)): Promise<INestApplication> {
  // Fastify, with the routing clients of the API know (a trailing slash and the letter case of the path do
  // not matter), no proxy trust; requests Node's HTTP parser refuses and URLs the router cannot decode get
  // the contract's error body.
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
      void reply.code(body.status).headers(SECURITY).header('X-Request-Id', requestId).send(body);
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(settings, databaseUrl), adapter, {
    bodyParser: false,
    bufferLogs: true,
  });
  app.useLogger(new NestLogger(logger));
  const fastify = app.getHttpAdapter().getInstance();
  const drain = new Drain(app.getHttpServer());
  drains.set(app, drain);
  // First of all: while draining, new requests are refused.
  fastify.addHook('onRequest', drain.refuseWhileDraining);
  // The request id and the request's log line (src/common/logging.ts).
  fastify.addHook('onRequest', requestLog(logger));
  if (settings.METRICS_ENABLED) fastify.addHook('onResponse', app.get(Metrics).onResponse);
  // Security headers by helmet (no CSP: the service serves JSON, and /docs is a page of its own), on every
  // response. No CORS unless a gateway adds it: browsers on other origins get no Access-Control-Allow-Origin.
  fastify.addHook('onRequest', (_request, reply, done) => {
    reply.headers(SECURITY);
    done();
  });
  // The request's context (nestjs-cls: principal, unit of work), entered before anything reads or sets it.
  const cls = app.get(ClsService);
  fastify.addHook('onRequest', (_request, _reply, done) => cls.run(() => done()));
  // JSON bodies as the contract has them (src/common/json-body.ts).
  fastify.addHook('onRequest', requireJsonBody);
  installJsonBody(fastify);

  // The database may not be there yet: the service starts anyway (503 until it is) and keeps trying.
  const connector = app.get(DatabaseConnector);
  if (!(await connector.connect(settings.DB_MIGRATE))) connector.retryInBackground(settings.DB_MIGRATE);

  if (settings.OPENAPI_ENABLED) {
    const openapi = new DocumentBuilder()
      .setTitle('Inventory Service API')
      .setVersion(SERVICE_VERSION)
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
      .addSecurityRequirements('bearer')
      .build();
    SwaggerModule.setup('docs', app, () => completeDocument(documentIdempotencyKey(SwaggerModule.createDocument(app, openapi, { extraModels: [...RESPONSE_CLASSES] })), app), {
      jsonDocumentUrl: 'openapi.json',
      customSiteTitle: SERVICE_NAME,
    });
  }
  return app;
}
