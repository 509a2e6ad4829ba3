import { closeDeliveryConnections, send, SendResult, signature } from './delivery';
import { checkTarget, TargetRefused } from './targets';

/** A batch of attempts for one webhook, as runJob makes it (on the service's event loop, or on the delivery thread: delivery-thread.ts). */
export interface SendJob {
  kind: 'send';
  id: number;
  url: string;
  /** The signing key, or why the webhook's secret could not be opened (each attempt then fails with it). */
  key: Uint8Array | null;
  keyError: string | null;
  items: Array<{ eventId: string; body: string }>;
  /** Attempts made at once. */
  concurrency: number;
  /** No attempt starts after this (Date.now() milliseconds). */
  sendBy: number;
}

/** How a batch is sent: attempts made at once, and when the last may start. */
export type SendOptions = Pick<SendJob, 'concurrency' | 'sendBy'>;

/** An attempt as it ended: the receiver's answer (or why none came), when it was made and when it ended. */
export interface Exchange {
  result: SendResult;
  attemptedAt: Date;
  answeredAt: Date;
}

/**
 * Where the dispatcher has a webhook's attempts made (WEBHOOK_DELIVERY_THREAD): `send` makes the attempts
 * (`items`, each an event's id and body, signed with `key`, or failed with why there is no key),
 * `concurrency` at once, none after a 410 or past `sendBy`, and resolves in the items' order with each
 * attempt as it ended, or undefined for one not made (also every one not finished when `stop` is called).
 */
export interface Deliveries {
  /** `told`: hears, as the batch goes, of each attempt that ends without a 2xx and of each sender that has no more to start. */
  send(url: string, key: Buffer | Error, items: SendJob['items'], options: SendOptions, told?: JobEvents): Promise<Array<Exchange | undefined>>;
  /** Ends the attempts in flight (answered as not made) and closes the kept-alive connections. */
  stop(): Promise<void>;
}

/** The job a send is made of (the key as bytes, so that it can also be posted to the delivery thread; `id` matches the thread's answer). */
export function sendJob(id: number, url: string, key: Buffer | Error, items: SendJob['items'], options: SendOptions): SendJob {
  return { kind: 'send', id, url, items, ...options, key: key instanceof Error ? null : new Uint8Array(key), keyError: key instanceof Error ? key.message : null };
}

/**
 * What a batch tells as it goes (before it resolves): `failed(i, x)`, the attempt of `items[i]` ended without
 * a 2xx; `idle()`, one of its senders has no more attempts to start (once per sender; the senders a batch of
 * fewer items than `concurrency` never needs are told at once).
 */
export interface JobEvents<X = Exchange> {
  failed?(index: number, x: X): void;
  idle?(): void;
}

/** An attempt as runJob answers it, as the dispatcher takes it. */
export const exchangeOf = (x: Exchanged): Exchange => ({ result: x.result, attemptedAt: new Date(x.attemptedAt), answeredAt: new Date(x.answeredAt) });

/** runJob's answer as the dispatcher takes it. */
export const exchanges = (results: Array<Exchanged | null>): Array<Exchange | undefined> => results.map((x) => (x ? exchangeOf(x) : undefined));

/** Whether an attempt ended without a 2xx. */
export const failed = (x: Exchanged): boolean => x.result.status === null || x.result.status < 200 || x.result.status >= 300;

/**
 * The attempts made on the service's event loop (the default): an attempt's request costs about what an
 * incoming request does, and the loop has room for it beside the API (README "Webhooks": measured against
 * the delivery thread, the same adjustments per second with a webhook, 35–40 MB less memory).
 */
export class InlineDeliveries implements Deliveries {
  private readonly stopping = new AbortController();

  constructor(private readonly allowedHosts: readonly string[]) {}

  async send(url: string, key: Buffer | Error, items: SendJob['items'], options: SendOptions, told?: JobEvents): Promise<Array<Exchange | undefined>> {
    if (this.stopping.signal.aborted) return items.map(() => undefined);
    try {
      const job = sendJob(0, url, key, items, options);
      const events: JobEvents<Exchanged> = { failed: told?.failed && ((i, x) => told.failed!(i, exchangeOf(x))), idle: told?.idle && (() => told.idle!()) };
      return exchanges(await runJob(job, this.allowedHosts, this.stopping.signal, events));
    } catch {
      return items.map(() => undefined); // not made, as when the delivery thread fails: recorded pending, made again
    }
  }

  stop(): Promise<void> {
    this.stopping.abort();
    closeDeliveryConnections();
    return Promise.resolve();
  }
}

/** An attempt as it ended: the answer (or why none came), when it was made and when it ended (Date.now() milliseconds). */
export interface Exchanged {
  result: SendResult;
  attemptedAt: number;
  answeredAt: number;
}

/** A job's attempts, in its items' order; null for an attempt not made (after a 410, past sendBy, or stopped). */
export interface SentJob {
  kind: 'sent';
  id: number;
  results: Array<Exchanged | null>;
}

/** What a job tells as it goes (JobEvents), from the delivery thread. */
export type JobEvent = { kind: 'failed'; id: number; index: number; x: Exchanged } | { kind: 'idle'; id: number };

/** One attempt: the target checked again, the signed POST to the checked address. Null when `stopping` has been aborted. */
async function exchange(job: SendJob, eventId: string, body: string, allowedHosts: readonly string[], stopping: AbortSignal): Promise<Exchanged | null> {
  let result: SendResult;
  let attemptedAt = Date.now();
  try {
    const target = await checkTarget(job.url, allowedHosts);
    if (!job.key) throw new Error(job.keyError ?? 'no signing key');
    attemptedAt = Date.now();
    const timestamp = Math.floor(attemptedAt / 1000);
    const key = Buffer.from(job.key.buffer, job.key.byteOffset, job.key.byteLength);
    const headers = { 'webhook-id': eventId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature(key, eventId, timestamp, body) };
    result = await send(target, headers, body, stopping);
  } catch (err) {
    const message = err instanceof TargetRefused ? `target refused: ${err.message}` : `not sent: ${(err as Error).message}`;
    result = { status: null, body: null, retryAfter: null, error: message };
  }
  return stopping.aborted ? null : { result, attemptedAt, answeredAt: Date.now() };
}

/**
 * A job's attempts, `concurrency` at a time, in its items' order; none starts after a 410 (the webhook is
 * turned off), past `sendBy` or once `stopping` is aborted; `told` hears of them as they go (JobEvents).
 */
export async function runJob(job: SendJob, allowedHosts: readonly string[], stopping: AbortSignal, told: JobEvents<Exchanged> = {}): Promise<Array<Exchanged | null>> {
  const results: Array<Exchanged | null> = new Array<Exchanged | null>(job.items.length).fill(null);
  let next = 0;
  let gone = false;
  const senders = Math.max(1, Math.min(job.concurrency, job.items.length));
  for (let unneeded = job.concurrency - senders; unneeded > 0; unneeded--) told.idle?.();
  await Promise.all(
    Array.from({ length: senders }, async () => {
      while (!gone && !stopping.aborted && next < job.items.length && Date.now() < job.sendBy) {
        const i = next++;
        const x = (results[i] = await exchange(job, job.items[i].eventId, job.items[i].body, allowedHosts, stopping));
        if (x?.result.status === 410) gone = true;
        if (x && told.failed && failed(x)) told.failed(i, x);
      }
      told.idle?.();
    }),
  );
  return results;
}
