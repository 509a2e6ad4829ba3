import { createServer } from 'node:net';

/**
 * A loopback port nothing listened on a moment ago. Only for what must be told its port before it
 * starts (the embedded PostgreSQL) or for an address where nothing should answer: a server that can bind
 * port 0 itself does so and reports its port (the service's "listening on" line, the IdPs' issuer), since
 * a probed port may be taken by another process before it is used. Starting on a probed port goes
 * through `onFreePort`, which tries another port when it was taken meanwhile.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Whether a start failed because its port was taken (EADDRINUSE, or the embedded PostgreSQL's own words for it). */
export const portTaken = (err: unknown): boolean => /EADDRINUSE|already in use/i.test(err instanceof Error ? `${(err as { code?: string }).code ?? ''} ${err.message}` : String(err));

/** Starts something on a probed free port, on another one when that was taken in between (up to `attempts` ports). */
export async function onFreePort<T>(start: (port: number, attempt: number) => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort(), attempt);
    } catch (err) {
      if (attempt >= attempts || !portTaken(err)) throw err;
    }
  }
}
