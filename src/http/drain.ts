import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Graceful shutdown of the HTTP server: stop accepting connections, let the requests in flight finish
 * (their responses close their keep-alive connections), answer requests that still arrive on open
 * connections with 503, and cut off whatever is left at the deadline.
 */
export class Drain {
  private draining = false;
  private readonly open = new Set<ServerResponse>();

  constructor(private readonly server: Server) {
    server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
      this.open.add(res);
      res.once('close', () => {
        this.open.delete(res);
        if (this.draining) server.closeIdleConnections();
      });
    });
  }

  /** Whether the server is draining: a new request is then refused (`refuse`). */
  get isDraining(): boolean {
    return this.draining;
  }

  /** Refuses a request that arrived while draining: 503 and its connection closed (both platforms call it first of all). */
  refuse(res: ServerResponse): void {
    const body = JSON.stringify({ error: 'service_unavailable', message: 'The service is shutting down; retry on another instance', status: 503 });
    res.writeHead(503, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Retry-After': '1', Connection: 'close' });
    res.end(body);
  }

  /**
   * Drains within `timeoutMs`; resolves with how many requests were in flight and how many had to be cut off.
   * `beforeCutOff` runs at the deadline, before the connections left are closed, when requests are still in
   * flight (the units of work are ended first: nothing of a request cut off commits after it).
   */
  async drain(timeoutMs: number, beforeCutOff: () => void = () => undefined): Promise<{ inFlight: number; cutOff: number }> {
    this.draining = true;
    const inFlight = this.open.size;
    this.server.close();
    for (const res of this.open) if (!res.headersSent) res.setHeader('Connection', 'close');
    this.server.closeIdleConnections();
    const until = Date.now() + timeoutMs;
    while (this.open.size && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const cutOff = this.open.size;
    if (cutOff) beforeCutOff();
    this.server.closeAllConnections();
    return { inFlight, cutOff };
  }
}

/** The Drain of each application (set by createApp). */
export const drains = new WeakMap<object, Drain>();

/**
 * Requests Node's HTTP parser refuses before any handler runs (a malformed request line or header,
 * headers over the size limit) get the contract's error body instead of Node's empty answer
 * (Fastify's `clientErrorHandler`, the Node server's `clientError` listener on Express).
 */
export function clientErrorAsJson(err: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify({
    error: 'bad_request',
    message: tooLarge ? 'Request headers are too large' : 'Malformed HTTP request',
    status,
  });
  socket.end(
    `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
