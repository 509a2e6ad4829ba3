import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { createApp } from './bootstrap';
import { loadSettings, Settings, SettingsError } from './config/settings';
import { EmbeddedDatabase, startEmbeddedPostgres } from './database/embedded-postgres';

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
  const shutdown = async () => {
    await app.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  await app.listen(settings.PORT, settings.HOST);
  process.stdout.write(`inventory-service listening on http://${settings.HOST}:${settings.PORT} (auth mode ${settings.AUTH_MODE})\n`);
}

main().catch((err) => {
  process.stderr.write(`inventory-service failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
