import { parentPort, workerData } from 'node:worker_threads';
import { closeDeliveryConnections } from './delivery';
import { Exchanged, JobEvent, runJob, SendJob, SentJob } from './delivery-jobs';

/** The delivery thread (delivery-thread.ts): makes each batch of attempts it is sent and answers with their ends. */
const allowedHosts = (workerData as { allowedHosts: string[] }).allowedHosts;
const stopping = new AbortController();

parentPort!.on('message', (m: SendJob | { kind: 'stop' }) => {
  if (m.kind === 'stop') {
    stopping.abort();
    closeDeliveryConnections();
  } else {
    const tell = (e: JobEvent) => parentPort!.postMessage(e);
    const told = { failed: (index: number, x: Exchanged) => tell({ kind: 'failed', id: m.id, index, x }), idle: () => tell({ kind: 'idle', id: m.id }) };
    void runJob(m, allowedHosts, stopping.signal, told).then((results) => parentPort!.postMessage({ kind: 'sent', id: m.id, results } satisfies SentJob));
  }
});
