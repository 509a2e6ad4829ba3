import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { createApp } from './bootstrap';
import { loadSettings, Settings, SettingsError } from './config/settings';
import { EmbeddedDatabase, startEmbeddedPostgres, takeOverSignals } from './database/embedded-postgres';
import { createLogger, flushLogSync } from './common/logging';
import { loadDemoData } from './demo/demo-data';
import { SERVICE_VERSION } from './health/health.controller';
import { drains } from './http/drain';
import { UnitOfWork } from './database/unit-of-work';

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  let settings: Settings;
  try {
    settings = loadSettings(process.env);
  } catch (err) {
    if (err instanceof SettingsError) {
      // One JSON line naming every wrong variable, with the default log settings (LOG_LEVEL may be the wrong one).
      createLogger({ LOG_LEVEL: 'info', NODE_ENV: 'production' }, 2).fatal({ problems: err.problems }, err.message);
      process.exit(1);
    }
    throw err;
  }
  const log = createLogger(settings);

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = settings.DATABASE_URL;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({ dir: settings.EMBEDDED_PG_DIR, port: settings.EMBEDDED_PG_PORT });
    databaseUrl = embedded.url;
    log.info({ port: settings.EMBEDDED_PG_PORT, dir: settings.EMBEDDED_PG_DIR }, `embedded PostgreSQL started on port ${settings.EMBEDDED_PG_PORT} (data in ${settings.EMBEDDED_PG_DIR})`);
  }

  const app = await createApp(settings, databaseUrl, log);
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const started = Date.now();
    // Stop accepting, let requests in flight finish (up to SHUTDOWN_TIMEOUT_MS), then close the pool.
    // At the deadline the units of work still running are ended before their requests are cut off.
    const units = app.get(UnitOfWork);
    const { inFlight, cutOff } = (await drains.get(app)?.drain(settings.SHUTDOWN_TIMEOUT_MS, () => units.abortAll())) ?? { inFlight: 0, cutOff: 0 };
    await app.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    log.info(
      { signal, ms: Date.now() - started, inFlight, cutOff },
      `inventory-service stopped on ${signal} in ${Date.now() - started} ms: ${inFlight} request(s) in flight, ` +
        `${inFlight - cutOff} finished, ${cutOff} cut off after ${settings.SHUTDOWN_TIMEOUT_MS} ms`,
    );
    flushLogSync(log);
    process.exit(0);
  };
  takeOverSignals();
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  await app.listen(settings.PORT, settings.HOST);
  const { port } = app.getHttpServer().address() as { port: number }; // the bound one (PORT=0: chosen by the system)
  log.info(
    { host: settings.HOST, port, platform: settings.HTTP_PLATFORM, authMode: settings.AUTH_MODE, version: SERVICE_VERSION, node: process.version },
    `inventory-service listening on http://${settings.HOST}:${port} (${settings.HTTP_PLATFORM}, auth mode ${settings.AUTH_MODE})`,
  );
  log.flush(); // the line process supervisors wait for: not held in the log buffer
  // A first look: the demo tenant, loaded through the API when the dev tenant has no items yet.
  if (settings.NODE_ENV === 'development' && settings.AUTH_MODE === 'dev' && settings.DEMO_DATA) {
    const host = ['0.0.0.0', '::'].includes(settings.HOST) ? '127.0.0.1' : settings.HOST;
    await loadDemoData(`http://${host.includes(':') ? `[${host}]` : host}:${port}`, log).catch((err: unknown) =>
      log.error({ err }, 'demo data could not be loaded (the service runs on; DEMO_DATA=false skips it)'),
    );
  }
}

main().catch((err) => {
  createLogger({ LOG_LEVEL: 'info', NODE_ENV: 'production' }, 2).fatal({ err }, `inventory-service failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
