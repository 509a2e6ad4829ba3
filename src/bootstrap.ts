import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import helmet from 'helmet';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { Logger as PinoLogger } from 'pino';
import { AppModule } from './app.module';
import { documentIdempotencyKey } from './common/idempotency';
import { completeDocument } from './common/openapi';
import { createLogger, NestLogger, requestLog } from './common/logging';
import { Settings } from './config/settings';
import { DatabaseConnector } from './database/connector';
import { Metrics } from './metrics/metrics';
import { SERVICE_NAME, SERVICE_VERSION } from './health/health.controller';
import { answerClientErrorsAsJson, Drain, drains } from './shutdown';

/** Builds the application (used by main.ts and by the e2e tests): migrated, documented, not yet listening. */
export async function createApp(settings: Settings, databaseUrl: string, logger: PinoLogger = createLogger(settings)): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(settings, databaseUrl), {
    bodyParser: false,
    bufferLogs: true,
  });
  app.useLogger(new NestLogger(logger));
  const drain = new Drain(app.getHttpServer());
  drains.set(app, drain);
  app.use(drain.refuseWhileDraining);
  answerClientErrorsAsJson(app.getHttpServer());
  // Security headers (no CSP: the service serves JSON, and /docs is a page of its own). No CORS unless a
  // gateway adds it: browsers on other origins get no Access-Control-Allow-Origin.
  app.use(helmet({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false }));
  // The request id and the request's log line (src/common/logging.ts).
  app.use(requestLog(logger));
  if (settings.METRICS_ENABLED) app.use(app.get(Metrics).middleware);
  app.set('trust proxy', false);
  app.disable('x-powered-by');

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
    SwaggerModule.setup('docs', app, () => completeDocument(documentIdempotencyKey(SwaggerModule.createDocument(app, openapi)), app), {
      jsonDocumentUrl: 'openapi.json',
      customSiteTitle: SERVICE_NAME,
    });
  }
  return app;
}
