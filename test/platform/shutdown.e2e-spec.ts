import { nativeRequire } from '../support/dist';
import { testDatabaseUrl, PLATFORMS } from '../support/app';
import { startServiceProcess } from '../support/processes';
import { sleep } from '../support/matchers';

type PgClient = { connect(): Promise<void>; query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>; end(): Promise<void> };
const { Client } = nativeRequire('pg') as { Client: new (o: { connectionString: string }) => PgClient };

/**
 * SIGTERM drains (issue: in-flight requests were reset and a write committed without its response):
 * the service stops accepting, lets requests in flight finish within SHUTDOWN_TIMEOUT_MS, closes the
 * pool and logs one line. A request is held in flight by a row lock the test holds on the item it changes.
 */
describe.each(PLATFORMS)('Graceful shutdown on %s', (platform) => {
  const db = () => {
    const c = new Client({ connectionString: testDatabaseUrl() });
    return c.connect().then(() => c);
  };

  async function holdItem(service: Awaited<ReturnType<typeof startServiceProcess>>) {
    const uoms = (await service.http.get('/v1/uoms?q=EA').expect(200)).body.data as Array<{ id: string; code: string }>;
    const itemNo = `SHUT-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    const item = (await service.http.post('/v1/items').send({ itemNo, name: 'before', baseUomId: uoms.find((u) => u.code === 'EA')!.id }).expect(201)).body.data;
    const locker = await db();
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM items WHERE id = $1 FOR UPDATE', [item.id]);
    return { item, locker };
  }

  it('finishes the request in flight, refuses new connections, logs one line and exits 0', async () => {
    const service = await startServiceProcess({ HTTP_PLATFORM: platform, AUTH_MODE: 'dev', DATABASE_URL: testDatabaseUrl(), DB_LOCK_TIMEOUT_MS: '20000', DB_STATEMENT_TIMEOUT_MS: '20000' });
    const { item, locker } = await holdItem(service);
    const patch = service.http.patch(`/v1/items/${item.id}`).send({ name: 'after' }).then((r) => r, (e: Error) => e);
    await sleep(300);
    service.child.kill('SIGTERM');
    await sleep(300);
    const late = await fetch(`${service.url}/health`).then((r) => r.status, (e: Error) => e.message);
    expect(late).not.toBe(200);
    await locker.query('COMMIT');
    const res = await patch;
    expect(res).toMatchObject({ status: 200, body: { data: { name: 'after' } } });
    await service.closed; // exited, its output read to the end
    expect(service.child.exitCode).toBe(0);
    expect(service.output()).toMatch(/stopped on SIGTERM in \d+ ms: 1 request\(s\) in flight, 1 finished, 0 cut off/);
    const { rows } = await locker.query('SELECT name FROM items WHERE id = $1', [item.id]);
    expect(rows).toEqual([{ name: 'after' }]);
    await locker.end();
  });

  it('cuts off what is still running at SHUTDOWN_TIMEOUT_MS, and its change does not commit', async () => {
    const service = await startServiceProcess({
      HTTP_PLATFORM: platform,
      AUTH_MODE: 'dev', DATABASE_URL: testDatabaseUrl(), SHUTDOWN_TIMEOUT_MS: '300', DB_LOCK_TIMEOUT_MS: '3000', DB_STATEMENT_TIMEOUT_MS: '3000',
    });
    const { item, locker } = await holdItem(service);
    const patch = service.http.patch(`/v1/items/${item.id}`).send({ name: 'never' }).then((r) => r.status, (e: Error) => e.message);
    await sleep(300);
    service.child.kill('SIGTERM');
    expect(await patch).not.toBe(200);
    await locker.query('COMMIT');
    await service.closed;
    expect(service.child.exitCode).toBe(0);
    expect(service.output()).toMatch(/1 request\(s\) in flight, 0 finished, 1 cut off after 300 ms/);
    const { rows } = await locker.query('SELECT name FROM items WHERE id = $1', [item.id]);
    expect(rows).toEqual([{ name: 'before' }]);
    await locker.end();
  });
});
