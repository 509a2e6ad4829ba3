import type { INestApplication } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import type * as Bootstrap from '../../src/bootstrap';
import type * as SettingsModule from '../../src/config/settings';
import { fromDist, nativeRequire } from './dist';
import { TestIdp } from './idp';
import { registerApp, unregisterApp } from './openapi-check';
import { DEFAULT_PLATFORM } from './platforms';

export { DEFAULT_PLATFORM, PLATFORMS, Platform } from './platforms';

const { createApp } = fromDist<typeof Bootstrap>('bootstrap');
const { loadSettings } = fromDist<typeof SettingsModule>('config/settings');
const { getDataSourceToken } = nativeRequire('@nestjs/typeorm') as { getDataSourceToken(): string };

export const ALL = [
  'catalog:read', 'catalog:write', 'inventory:read', 'inventory:write', 'procurement:read', 'procurement:write',
  'procurement:approve', 'sales:read', 'sales:write', 'production:read', 'production:write', 'events:read', 'events:write',
];

export interface TestContext {
  app: INestApplication;
  idp: TestIdp;
  /** Base URL of the listening service. */
  url: string;
  http: ReturnType<typeof request>;
  /** The data source (connects as the configured user: a superuser in tests, so bypasses RLS — for assertions only). */
  db: DataSource;
  close(): Promise<void>;
}

export function testDatabaseUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set (jest globalSetup sets it)');
  return url;
}

/**
 * Boots the real application against the test database, with a test IdP on loopback, on the platform
 * `env.HTTP_PLATFORM` names (default DEFAULT_PLATFORM).
 */
export async function startApp(env: Record<string, string> = {}, databaseUrl = testDatabaseUrl()): Promise<TestContext> {
  const idp = await TestIdp.start();
  const settings = loadSettings({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    AUTH_MODE: 'jwt',
    IDP_ISSUER_URL: idp.issuer,
    IDP_AUDIENCE: idp.audience,
    CLAIM_NAMESPACE: idp.claimNamespace,
    DB_POOL_SIZE: '20',
    RATE_LIMIT_PER_MINUTE: '0',
    HTTP_PLATFORM: DEFAULT_PLATFORM,
    // Webhooks: the workers run only in the specs that deliver (test/webhooks), and loopback targets are
    // allowed so that specs can create webhooks (fixtures) and receive on loopback.
    WEBHOOKS_ENABLED: 'false',
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    ...env,
  });
  const app = await createApp(settings, databaseUrl);
  // A real listening socket: parallel requests each get their own connection, as from real clients.
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const base = `http://127.0.0.1:${port}`;
  // Every answer this app gives the spec's client is checked against its OpenAPI description.
  if (settings.OPENAPI_ENABLED) registerApp(base, (await request(base).get('/openapi.json').expect(200)).body);
  return {
    app,
    idp,
    url: `http://127.0.0.1:${port}`,
    http: request(`http://127.0.0.1:${port}`),
    db: app.get<DataSource>(getDataSourceToken()),
    close: async () => {
      unregisterApp(base);
      await app.close();
      await idp.stop();
    },
  };
}

/** A fresh tenant (or `tenantId`, e.g. one another app made) with a token of `ctx`'s IdP holding the given permissions (default: all). */
export async function newTenant(ctx: TestContext, permissions: string[] = ALL, tenantId: string = randomUUID()) {
  const token = await ctx.idp.token({ tenantId, permissions });
  const auth = { Authorization: `Bearer ${token}` };
  return {
    tenantId,
    token,
    auth,
    get: (url: string) => ctx.http.get(url).set(auth),
    post: (url: string, body?: object) => ctx.http.post(url).set(auth).send(body),
    patch: (url: string, body?: object) => ctx.http.patch(url).set(auth).send(body),
  };
}
export type Tenant = Awaited<ReturnType<typeof newTenant>>;
