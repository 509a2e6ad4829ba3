import { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { ClsService } from 'nestjs-cls';
import type { Logger as PinoLogger } from 'pino';
import { AppModule } from './app.module';
import { documentIdempotencyKey } from './common/idempotency';
import { completeDocument } from './common/openapi';
import { createLogger, NestLogger } from './common/logging';
import { Settings } from './config/settings';
import { DatabaseConnector } from './database/connector';
import { Metrics } from './metrics/metrics';
import { SERVICE_NAME, SERVICE_VERSION } from './health/health.controller';
import { Drain, drains } from './http/drain';
import { httpPlatform, recordPlatform } from './http/platform';
import { RESPONSE_CLASSES } from './common/responses';

/** Builds the application (used by main.ts and by the e2e tests): migrated, documented, not yet listening. */
export async function createApp(settings: Settings, databaseUrl: string, logger: PinoLogger = createLogger(settings)): Promise<INestApplication> {
  // Express or Fastify (HTTP_PLATFORM): everything that differs between them is in src/http/.
  const platform = httpPlatform(settings.HTTP_PLATFORM);
  const app = await NestFactory.create(AppModule.forRoot(settings, databaseUrl), platform.createAdapter(logger), {
    // No framework body parser: JSON bodies are read the contract's way on both platforms (src/http/body.ts).
    bodyParser: false,
    bufferLogs: true,
  });
  recordPlatform(app, platform);
  app.useLogger(new NestLogger(logger));
  const drain = new Drain(app.getHttpServer());
  drains.set(app, drain);
  // Drain, request id and log line, metrics, security headers, the request's context (nestjs-cls), JSON bodies.
  platform.install(app, {
    logger,
    cls: app.get(ClsService),
    drain,
    metrics: settings.METRICS_ENABLED ? app.get(Metrics) : undefined,
  });

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
  // Routes registered (Nest's init, idempotent: listen() calls it again), then the platform's last step.
  await app.init();
  platform.ready(app);
  return app;
}
