import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, chmodSync, cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIST_DIR } from '../support/dist';
import { onFreePort, portTaken } from '../support/ports';

const root = join(__dirname, '..', '..');

/** `npm run start:dev` (scripts/dev.js) in a copy of the project, so the change it reacts to touches nothing here. */
describe('npm run start:dev', () => {
  it('restarts the service when a source file changes, on the same embedded PostgreSQL, and stops it cleanly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inventory-dev-'));
    let child: ChildProcess | undefined;
    try {
      for (const entry of ['src', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(root, entry), join(dir, entry), { recursive: true });
      cpSync(DIST_DIR, join(dir, 'dist'), { recursive: true }); // what `npm run build` leaves before it
      symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
      const pgDir = join(dir, '.data', 'postgres');
      chmodSync(dir, 0o755); // as root the embedded PostgreSQL runs as the postgres user, which must traverse it
      let output = '';
      const listeningLines = () => output.split('\n').filter((l) => l.includes('listening on'));
      const listening = () => listeningLines().length;
      /** The port the service (the latest one started) bound. */
      const port = () => Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(listeningLines().at(-1) ?? '')?.[1]);
      const until = async (probe: () => boolean, ms: number) => {
        const end = Date.now() + ms;
        while (!probe() && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
        if (!probe()) throw new Error(`timed out; output so far:\n${output}`);
      };
      // The service binds a port itself (PORT=0) and names it in its "listening on" line (above); the
      // embedded PostgreSQL must be told its port up front: a probed one, and another one should something
      // take it before PostgreSQL binds it (the service then says the port is in use).
      const [pgPort, dev] = await onFreePort(async (pgPort) => {
        output = '';
        // No DATABASE_URL: the service starts its embedded PostgreSQL, as a new user's `npm run start:dev` does.
        const started = spawn(process.execPath, [join(dir, 'scripts', 'dev.js')], {
          cwd: dir,
          env: { PATH: process.env.PATH ?? '', EMBEDDED_PG_DIR: pgDir, EMBEDDED_PG_PORT: String(pgPort), PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'test', LOG_LEVEL: 'info' },
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true, // its own process group: a failed test kills tsc and the service with it
        });
        child = started;
        started.stdout!.on('data', (d) => (output += d));
        started.stderr!.on('data', (d) => (output += d));
        await until(() => listening() === 1 || portTaken(output), 90_000);
        if (listening() === 0) {
          process.kill(-started.pid!, 'SIGKILL');
          await once(started, 'exit');
          throw Object.assign(new Error(`port ${pgPort} was taken:\n${output}`), { code: 'EADDRINUSE' });
        }
        return [pgPort, started] as const;
      });
      expect((await fetch(`http://127.0.0.1:${port()}/v1/uoms`)).status).toBe(200); // dev mode by default
      const created = await fetch(`http://127.0.0.1:${port()}/v1/uoms`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ code: 'PAL', name: 'Pallet', decimals: 0 }),
      });
      expect(created.status).toBe(201);

      appendFileSync(join(dir, 'src', 'main.ts'), '\n// changed\n');
      await until(() => listening() === 2, 60_000);
      expect((await fetch(`http://127.0.0.1:${port()}/health/live`)).status).toBe(200);
      expect(output).toMatch(/stopped on SIGTERM/); // the old process drained and stopped before the new one
      // The new process started the same embedded database again: what was written before is there.
      const uoms = (await (await fetch(`http://127.0.0.1:${port()}/v1/uoms?limit=100`)).json()) as { data: Array<{ code: string }> };
      expect(uoms.data.map((u) => u.code)).toContain('PAL');

      const exited = once(dev, 'exit');
      dev.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
      // The embedded PostgreSQL stopped with it: nothing listens on its port, no postmaster.pid left.
      const refused = await new Promise<boolean>((r) => {
        const socket = connect(pgPort, '127.0.0.1');
        socket.once('connect', () => (socket.destroy(), r(false)));
        socket.once('error', () => r(true));
      });
      expect({ refused, pid: existsSync(join(pgDir, 'postmaster.pid')) }).toEqual({ refused: true, pid: false });
    } finally {
      if (child && child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
