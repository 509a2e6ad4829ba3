import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeDeliveryConnections, MAX_RESPONSE_BYTES, send } from './delivery';

/** A loopback server whose answer each test sets; it keeps what it received. */
describe('send (a webhook attempt’s HTTP exchange)', () => {
  let server: Server;
  let port: number;
  let answer: (req: IncomingMessage, res: ServerResponse, body: string) => void;
  const received: Array<{ method?: string; url?: string; host?: string; headers: IncomingMessage['headers']; body: string }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        received.push({ method: req.method, url: req.url, host: req.headers.host, headers: req.headers, body });
        answer(req, res, body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  beforeEach(() => (received.length = 0));
  afterAll(async () => {
    closeDeliveryConnections();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  // A host name that resolves nowhere: the request can only arrive because it goes to the checked address.
  const target = (path = '/hook?x=1') => ({ url: new URL(`http://receiver.invalid:${port}${path}`), address: '127.0.0.1', family: 4 as const });

  it('POSTs the body with the given headers to the checked address, the host name kept in Host; answers status, body and Retry-After', async () => {
    answer = (_req, res) => res.writeHead(503, { 'retry-after': '7' }).end('busy');
    const r = await send(target(), { 'webhook-id': 'evt_1' }, '{"a":1}');
    expect(r).toEqual({ status: 503, body: 'busy', retryAfter: '7', error: null });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'POST', url: '/hook?x=1', host: `receiver.invalid:${port}`, body: '{"a":1}' });
    expect(received[0].headers).toMatchObject({ 'webhook-id': 'evt_1', 'content-type': 'application/json', 'content-length': '7' });
  });

  it(`keeps at most ${MAX_RESPONSE_BYTES} bytes of an answer's body`, async () => {
    answer = (_req, res) => res.writeHead(200).end('x'.repeat(64 * 1024));
    const r = await send(target(), {}, '{}');
    expect(r.status).toBe(200);
    expect(r.body).toBe('x'.repeat(MAX_RESPONSE_BYTES));
  });

  it('follows no redirect', async () => {
    answer = (req, res) => (req.url === '/elsewhere' ? res.writeHead(204).end() : res.writeHead(307, { location: '/elsewhere' }).end());
    const r = await send(target('/hook'), {}, '{}');
    expect(r.status).toBe(307);
    expect(received.map((x) => x.url)).toEqual(['/hook']);
  });

  it('ends with no answer when none comes in time, and when the service stops', async () => {
    answer = () => undefined; // never answers
    const late = await send(target(), {}, '{}', undefined, 300);
    expect(late).toEqual({ status: null, body: null, retryAfter: null, error: 'no answer within 0.3 s' });
    const stop = new AbortController();
    const stopped = send(target(), {}, '{}', stop.signal);
    await new Promise((resolve) => setTimeout(resolve, 100));
    stop.abort();
    expect(await stopped).toEqual({ status: null, body: null, retryAfter: null, error: 'aborted: the service is stopping' });
  });

  it('answers with the status and the body so far when the status came in time and the body did not end', async () => {
    answer = (_req, res) => {
      res.writeHead(200, { 'retry-after': '3' });
      res.write('ok'); // never ended
    };
    const r = await send(target(), {}, '{}', undefined, 300);
    expect(r).toEqual({ status: 200, body: 'ok', retryAfter: '3', error: null });
  });

  it('sends nothing once the service has stopped (an attempt that was still checking its target)', async () => {
    answer = (_req, res) => res.writeHead(204).end();
    const stop = new AbortController();
    stop.abort();
    expect(await send(target(), {}, '{}', stop.signal)).toEqual({ status: null, body: null, retryAfter: null, error: 'aborted: the service is stopping' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(received).toHaveLength(0);
  });

  it('says why when nothing listens at the address', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const freePort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const r = await send({ url: new URL(`http://receiver.invalid:${freePort}/`), address: '127.0.0.1', family: 4 }, {}, '{}');
    expect(r).toMatchObject({ status: null, body: null, retryAfter: null });
    expect(r.error).toMatch(/ECONNREFUSED/);
  });
});
