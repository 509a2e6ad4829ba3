import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { createApp } from './bootstrap';
import { loadSettings, Settings, SettingsError } from './config/settings';
import { EmbeddedDatabase, startEmbeddedPostgres, takeOverSignals } from './database/embedded-postgres';
import { drains } from './shutdown';

async function main(): Promise<void> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  let settings: Settings;
  try {
    settings = loadSettings(process.env);
  } catch (err) {
    if (err instanceof SettingsError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }

  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = settings.DATABASE_URL;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({ dir: settings.EMBEDDED_PG_DIR, port: settings.EMBEDDED_PG_PORT });
    databaseUrl = embedded.url;
    process.stdout.write(`embedded PostgreSQL started on port ${settings.EMBEDDED_PG_PORT} (data in ${settings.EMBEDDED_PG_DIR})\n`);
  }

  const app = await createApp(settings, databaseUrl);
  let stopping = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    const started = Date.now();
    // Stop accepting, let requests in flight finish (up to SHUTDOWN_TIMEOUT_MS), then close the pool.
    const { inFlight, cutOff } = (await drains.get(app)?.drain(settings.SHUTDOWN_TIMEOUT_MS)) ?? { inFlight: 0, cutOff: 0 };
    await app.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    process.stdout.write(
      `inventory-service stopped on ${signal} in ${Date.now() - started} ms: ${inFlight} request(s) in flight, ` +
        `${inFlight - cutOff} finished, ${cutOff} cut off after ${settings.SHUTDOWN_TIMEOUT_MS} ms\n`,
    );
    process.exit(0);
  };
  takeOverSignals();
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  await app.listen(settings.PORT, settings.HOST);
  process.stdout.write(`inventory-service listening on http://${settings.HOST}:${settings.PORT} (auth mode ${settings.AUTH_MODE})\n`);
}

main().catch((err) => {
  process.stderr.write(`inventory-service failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
