import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { scratchDatabase } from '../support/scratch-database';

/** One request a receiver got. */
export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** What the receiver answers a request with (default 204). */
export type Answer = (r: Received, nth: number) => { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | undefined;

/** A webhook receiver on loopback (port 0): records every request, answers as `answer` says. */
export class Receiver {
  readonly received: Received[] = [];
  answer: Answer = () => undefined;
  /** Answers waiting for their delay (cleared when the receiver stops). */
  private readonly delayed = new Set<NodeJS.Timeout>();
  private constructor(private readonly server: Server) {}

  static async start(answer?: Answer): Promise<Receiver> {
    let self: Receiver | undefined;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: Received = { headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
        self!.received.push(r);
        const a = self!.answer(r, self!.received.length) ?? { status: 204 };
        const reply = () => {
          res.writeHead(a.status, a.headers ?? {});
          res.end(a.body ?? '');
        };
        if (a.delayMs) {
          const timer = setTimeout(() => {
            self!.delayed.delete(timer);
            reply();
          }, a.delayMs);
          self!.delayed.add(timer);
        } else reply();
      });
    });
    self = new Receiver(server);
    if (answer) self.answer = answer;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Requests carrying this webhook-id. */
  of(eventId: string): Received[] {
    return this.received.filter((r) => r.headers['webhook-id'] === eventId);
  }

  /** Waits until `done()` holds (polling every 50 ms), or fails after `ms`. */
  async until(done: () => boolean, ms = 20_000, what = 'the deliveries'): Promise<void> {
    const end = Date.now() + ms;
    while (!done()) {
      if (Date.now() > end) throw new Error(`${what} did not arrive within ${ms} ms (got ${this.received.length} requests)`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  stop(): Promise<void> {
    for (const timer of this.delayed) clearTimeout(timer);
    this.delayed.clear();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * A database of the spec's own on the test server: its webhook workers see only the spec's events and
 * attempts. (Its feed's horizon is the server's oldest running transaction: another spec's open transaction,
 * in any database, holds it back.) Migrated by the first app.
 */
export async function ownDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const db = scratchDatabase('inventory_webhooks');
  await db.create();
  return { url: db.url.toString(), drop: db.drop };
}
