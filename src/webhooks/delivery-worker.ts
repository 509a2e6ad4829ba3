import { parentPort, workerData } from 'node:worker_threads';
import { closeDeliveryConnections, send, SendResult, signature } from './delivery';
import { checkTarget, TargetRefused } from './targets';

/** A batch of attempts for one webhook (delivery-thread.ts sends it, this thread makes them). */
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

const allowedHosts = (workerData as { allowedHosts: string[] }).allowedHosts;
const stopping = new AbortController();

/** One attempt: the target checked again, the signed POST to the checked address. Null when the thread is stopping. */
async function exchange(job: SendJob, eventId: string, body: string): Promise<Exchanged | null> {
  let result: SendResult;
  let attemptedAt = Date.now();
  try {
    const target = await checkTarget(job.url, allowedHosts);
    if (!job.key) throw new Error(job.keyError ?? 'no signing key');
    attemptedAt = Date.now();
    const timestamp = Math.floor(attemptedAt / 1000);
    const key = Buffer.from(job.key.buffer, job.key.byteOffset, job.key.byteLength);
    const headers = { 'webhook-id': eventId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature(key, eventId, timestamp, body) };
    result = await send(target, headers, body, stopping.signal);
  } catch (err) {
    const message = err instanceof TargetRefused ? `target refused: ${err.message}` : `not sent: ${(err as Error).message}`;
    result = { status: null, body: null, retryAfter: null, error: message };
  }
  return stopping.signal.aborted ? null : { result, attemptedAt, answeredAt: Date.now() };
}

/** A job's attempts, `concurrency` at a time; none starts after a 410 (the webhook is turned off) or past `sendBy`. */
async function run(job: SendJob): Promise<void> {
  const results: Array<Exchanged | null> = new Array<Exchanged | null>(job.items.length).fill(null);
  let next = 0;
  let gone = false;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(job.concurrency, job.items.length)) }, async () => {
      while (!gone && !stopping.signal.aborted && next < job.items.length && Date.now() < job.sendBy) {
        const i = next++;
        results[i] = await exchange(job, job.items[i].eventId, job.items[i].body);
        if (results[i]?.result.status === 410) gone = true;
      }
    }),
  );
  parentPort!.postMessage({ kind: 'sent', id: job.id, results } satisfies SentJob);
}

parentPort!.on('message', (m: SendJob | { kind: 'stop' }) => {
  if (m.kind === 'stop') {
    stopping.abort();
    closeDeliveryConnections();
  } else void run(m);
});
