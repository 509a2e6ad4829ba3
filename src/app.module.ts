import { DynamicModule, Module, Provider } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { ClsModule } from 'nestjs-cls';
import { AccessGuard } from './auth/access.guard';
import { JwtStrategy } from './auth/jwt.strategy';
import { TenantRateLimitGuard } from './auth/tenant-rate-limit.guard';
import { AllExceptionsFilter } from './common/exception.filter';
import { IdempotencyFailures, IdempotencyInterceptor } from './common/idempotency.interceptor';
import { AppValidationPipe } from './common/validation';
import { Settings } from './config/settings';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { MetricsModule } from './metrics/metrics.module';
import { UnitOfWorkInterceptor } from './tenancy/unit-of-work.interceptor';
import { DOMAIN_MODULES } from './domain-modules';

@Module({})
export class AppModule {
  static forRoot(settings: Settings, databaseUrl: string): DynamicModule {
    const providers: Provider[] = [
      { provide: Settings, useValue: settings },
      { provide: APP_FILTER, useClass: AllExceptionsFilter },
      { provide: APP_PIPE, useClass: AppValidationPipe },
      { provide: APP_GUARD, useClass: AccessGuard },
      // The request's unit of work, with the ETag of a versioned record and, after a rollback, a failed keyed
      // request's error stored (IdempotencyFailures).
      IdempotencyFailures,
      { provide: APP_INTERCEPTOR, useClass: UnitOfWorkInterceptor },
      // Inside the request's transaction (interceptors nest in registration order).
      { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor },
    ];
    if (settings.RATE_LIMIT_PER_MINUTE > 0) providers.push({ provide: APP_GUARD, useClass: TenantRateLimitGuard });
    if (settings.AUTH_MODE === 'jwt') providers.push(JwtStrategy);
    return {
      module: AppModule,
      global: true,
      imports: [
        // The request context (AsyncLocalStorage) is entered by the HTTP platform's request hook (src/http/), not
        // by nestjs-cls's middleware: no middleware layer on the request path.
        ClsModule.forRoot({ global: true }),
        PassportModule,
        DatabaseModule.forRoot(databaseUrl, {
          size: settings.DB_POOL_SIZE,
          tenantMaxConnections: settings.DB_TENANT_MAX_CONNECTIONS ?? Math.max(1, settings.DB_POOL_SIZE - 1),
          requestTimeoutMs: settings.DB_REQUEST_TIMEOUT_MS,
          acquireTimeoutMs: settings.DB_ACQUIRE_TIMEOUT_MS,
          statementTimeoutMs: settings.DB_STATEMENT_TIMEOUT_MS,
          lockTimeoutMs: settings.DB_LOCK_TIMEOUT_MS,
          idleInTransactionTimeoutMs: settings.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
        }),
        HealthModule,
        MetricsModule.forRoot(settings.METRICS_ENABLED),
        ...DOMAIN_MODULES,
      ],
      providers,
      exports: [Settings],
    };
  }

}
