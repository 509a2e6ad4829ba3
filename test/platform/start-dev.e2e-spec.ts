import { ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFileSync, cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDatabaseUrl } from '../support/app';
import { DIST_DIR } from '../support/dist';
import { freePort } from '../support/ports';

const root = join(__dirname, '..', '..');

/** `npm run start:dev` (scripts/dev.js) in a copy of the project, so the change it reacts to touches nothing here. */
describe('npm run start:dev', () => {
  it('restarts the service when a source file changes, and stops cleanly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inventory-dev-'));
    let child: ChildProcess | undefined;
    try {
      for (const entry of ['src', 'scripts', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(join(root, entry), join(dir, entry), { recursive: true });
      cpSync(DIST_DIR, join(dir, 'dist'), { recursive: true }); // what `npm run build` leaves before it
      symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
      const port = await freePort();
      child = spawn(process.execPath, [join(dir, 'scripts', 'dev.js')], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', DATABASE_URL: testDatabaseUrl(), PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'test', LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout!.on('data', (d) => (output += d));
      child.stderr!.on('data', (d) => (output += d));
      const listening = () => output.split('\n').filter((l) => l.includes('listening on')).length;
      const until = async (probe: () => boolean, ms: number) => {
        const end = Date.now() + ms;
        while (!probe() && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
        if (!probe()) throw new Error(`timed out; output so far:\n${output}`);
      };
      await until(() => listening() === 1, 60_000);
      expect((await fetch(`http://127.0.0.1:${port}/v1/uoms`)).status).toBe(200); // dev mode by default

      appendFileSync(join(dir, 'src', 'main.ts'), '\n// changed\n');
      await until(() => listening() === 2, 60_000);
      expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
      expect(output).toMatch(/stopped on SIGTERM/); // the old process drained and stopped before the new one

      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      if (child && child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 150_000);
});
