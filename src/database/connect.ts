import { existsSync } from 'node:fs';
import { DataSource } from 'typeorm';
import { loadSettings } from '../config/settings';
import { createDataSource } from './data-source';
import { EmbeddedDatabase, startEmbeddedPostgres } from './embedded-postgres';

/** Only the database settings: command-line tools need no identity provider, whatever AUTH_MODE the service uses. */
const DATABASE_SETTINGS = ['DATABASE_URL', 'EMBEDDED_PG_DIR', 'EMBEDDED_PG_PORT'] as const;

/**
 * Runs `work` with a data source connected like the service: DATABASE_URL, or the embedded
 * PostgreSQL (started for the duration, then stopped) when it is unset. For command-line tools.
 */
export async function withDatabase<T>(work: (dataSource: DataSource) => Promise<T>, log: (line: string) => void): Promise<T> {
  if (existsSync('.env')) process.loadEnvFile('.env');
  const env = Object.fromEntries(DATABASE_SETTINGS.map((key) => [key, process.env[key]]));
  const settings = loadSettings({ ...env, AUTH_MODE: 'dev' });
  let embedded: EmbeddedDatabase | undefined;
  let dataSource: DataSource | undefined;
  try {
    let url = settings.DATABASE_URL;
    if (!url) {
      embedded = await startEmbeddedPostgres({ dir: settings.EMBEDDED_PG_DIR, port: settings.EMBEDDED_PG_PORT }).catch((err) => {
        const reason = err instanceof Error && err.message ? ` (${err.message})` : '';
        throw new Error(
          `could not start the embedded PostgreSQL in ${settings.EMBEDDED_PG_DIR} on port ${settings.EMBEDDED_PG_PORT}${reason}. ` +
            `If the service is running on it, stop the service or point the tool at it: ` +
            `DATABASE_URL=postgres://postgres:postgres@127.0.0.1:${settings.EMBEDDED_PG_PORT}/inventory`,
        );
      });
      url = embedded.url;
      log(`embedded PostgreSQL started on port ${settings.EMBEDDED_PG_PORT} (data in ${settings.EMBEDDED_PG_DIR})`);
    }
    dataSource = await createDataSource(url).initialize();
    return await work(dataSource);
  } finally {
    await dataSource?.destroy().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
  }
}
