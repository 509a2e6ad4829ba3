import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { fromDist } from '../support/dist';
import { freePort } from '../support/ports';
import type * as Embedded from '../../src/database/embedded-postgres';

const { startEmbeddedPostgres } = fromDist<typeof Embedded>('database/embedded-postgres');

/** The embedded PostgreSQL says what is wrong and what to do, instead of "undefined" or a raw EACCES. */
describe('Embedded PostgreSQL start-up errors', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('a port already in use names the port and the settings to change', async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
    const { port } = busy.address() as { port: number };
    const dir = mkdtempSync(join(tmpdir(), 'inventory-pg-busy-'));
    dirs.push(dir);
    try {
      await expect(startEmbeddedPostgres({ dir, port })).rejects.toThrow(new RegExp(`port ${port} .*already in use.*EMBEDDED_PG_PORT`));
    } finally {
      busy.close();
    }
  });

  (userInfo().uid === 0 ? it : it.skip)('as root, a data directory below a folder the postgres user cannot traverse names that folder', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'inventory-pg-private-'));
    dirs.push(parent);
    chmodSync(parent, 0o700);
    await expect(startEmbeddedPostgres({ dir: join(parent, 'data'), port: await freePort() })).rejects.toThrow(
      new RegExp(`cannot traverse ${parent} \\(mode 700\\).*EMBEDDED_PG_DIR`),
    );
  });
});
