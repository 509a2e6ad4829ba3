import { Logger } from '@nestjs/common';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Deliveries, Exchange, exchangeOf, exchanges, JobEvent, JobEvents, SendJob, SendOptions, SentJob, sendJob } from './delivery-jobs';

/** How long a stopping service waits for the thread's attempts in flight to end (they are aborted at once). */
const STOP_WAIT_MS = 5_000;

/**
 * The webhook attempts' HTTP exchanges on a thread of their own (WEBHOOK_DELIVERY_THREAD=true;
 * delivery-worker.ts): target checks, signatures, requests and answers run off the event loop that serves
 * the API, for an instance whose loop is the limit. It costs the thread's V8 heap (35–40 MB). The
 * dispatcher keeps the database side (leases, records) and sends each batch of attempts here in one message.
 *
 * The thread starts with the first batch. Should it fail, the batches it held are answered as not made
 * (the dispatcher records them pending: made again, which a lost answer explains for any it had sent) and
 * the next batch starts a new thread.
 */
export class DeliveryThread implements Deliveries {
  private readonly logger = new Logger(DeliveryThread.name);
  private worker?: Worker;
  private readonly jobs = new Map<number, { size: number; resolve: (r: Array<Exchange | undefined>) => void; told?: JobEvents }>();
  private nextId = 1;
  private stopped = false;

  constructor(private readonly allowedHosts: readonly string[]) {}

  /** See Deliveries. */
  send(url: string, key: Buffer | Error, items: SendJob['items'], options: SendOptions, told?: JobEvents): Promise<Array<Exchange | undefined>> {
    if (this.stopped) return Promise.resolve(items.map(() => undefined));
    const id = this.nextId++;
    const job = sendJob(id, url, key, items, options);
    const worker = this.thread();
    return new Promise((resolve) => {
      this.jobs.set(id, { size: items.length, resolve, told });
      worker.postMessage(job);
    });
  }

  /** Ends the attempts in flight (answered as not made) and the thread, waiting at most STOP_WAIT_MS for its answers. */
  async stop(): Promise<void> {
    this.stopped = true;
    const worker = this.worker;
    if (!worker) return;
    const answered = [...this.jobs.values()].map(
      (j) =>
        new Promise<void>((done) => {
          const resolve = j.resolve;
          j.resolve = (r) => (resolve(r), done());
        }),
    );
    worker.postMessage({ kind: 'stop' });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(answered), new Promise((done) => (timer = setTimeout(done, STOP_WAIT_MS)))]);
    clearTimeout(timer);
    this.notMade();
    await worker.terminate();
  }

  /** Answers every batch still held as not made. */
  private notMade(): void {
    for (const job of this.jobs.values()) job.resolve(new Array<undefined>(job.size).fill(undefined));
    this.jobs.clear();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(join(__dirname, 'delivery-worker.js'), {
      workerData: { allowedHosts: [...this.allowedHosts] },
      // Its heap holds the batches in flight (a segment's bodies are at most 2 MiB: SEGMENT_MAX_BYTES in
      // segment-lease.ts) and the keep-alive connections. A process-wide --max-semi-space-size (as
      // start:prod's) overrides the young generation's limit here: the thread's new space then grows to
      // twice that flag (bench/README, eleventh round).
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 },
    });
    worker.unref();
    worker.on('message', (m: SentJob | JobEvent) => {
      const job = this.jobs.get(m.id);
      if (!job) return;
      if (m.kind === 'failed') return job.told?.failed?.(m.index, exchangeOf(m.x));
      if (m.kind === 'idle') return job.told?.idle?.();
      this.jobs.delete(m.id);
      job.resolve(exchanges(m.results));
    });
    const failed = (err: Error) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      if (!this.stopped) this.logger.error({ err }, 'the webhook delivery thread failed; its attempts in flight are recorded pending and made again');
      this.notMade();
    };
    worker.on('error', failed);
    worker.on('exit', (code) => failed(new Error(`the webhook delivery thread exited (${code})`)));
    this.worker = worker;
    this.logger.log(`webhook delivery thread started (thread ${worker.threadId})`);
    return worker;
  }
}
