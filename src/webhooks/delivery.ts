import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { CheckedTarget } from './targets';

/** A receiver has this long to answer (CONTRACT §9: a 2xx within 15 s is delivered). */
export const DELIVERY_TIMEOUT_MS = 15_000;
/** Most bytes of a receiver's answer kept with the attempt. */
export const MAX_RESPONSE_BYTES = 1024;

export interface SendResult {
  /** The receiver's status, or null when no answer came (connection refused, timeout, refused target). */
  status: number | null;
  /** At most MAX_RESPONSE_BYTES of the answer's body. */
  body: string | null;
  retryAfter: string | null;
  error: string | null;
}

/** The Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed with the secret's bytes. */
export function signature(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * Keep-alive connections per checked address: one agent per (scheme, host name, port, address), so a
 * connection is only ever reused for the address that was checked for it (a host name that resolves
 * elsewhere later gets an agent of its own, after its own check). At most MAX_AGENTS agents are kept.
 */
const MAX_AGENTS = 256;
const agents = new Map<string, http.Agent>();
function agentFor(target: CheckedTarget): http.Agent {
  const key = `${target.url.protocol}//${target.url.host}@${target.address}`;
  let agent = agents.get(key);
  if (agent) agents.delete(key); // re-inserted below: most recently used last
  else {
    const options = { keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: DELIVERY_TIMEOUT_MS };
    agent = target.url.protocol === 'https:' ? new https.Agent(options) : new http.Agent(options);
  }
  agents.set(key, agent);
  // Past MAX_AGENTS the least recently used is forgotten, not destroyed (an attempt may be in flight on it):
  // its idle connections close on their timeout.
  for (const oldest of agents.keys()) {
    if (agents.size <= MAX_AGENTS) break;
    agents.delete(oldest);
  }
  return agent;
}

/** Closes every kept-alive delivery connection (the service is stopping). */
export function closeDeliveryConnections(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

/** An attempt ended by the service's stop (its signal). */
const STOPPED: SendResult = Object.freeze({ status: null, body: null, retryAfter: null, error: 'aborted: the service is stopping' });

/**
 * POSTs `body` to the checked target, connecting to the address that was checked (its host name stays in
 * the Host header and TLS server name), with the Standard Webhooks headers. No redirect is followed (a
 * 3xx is an answer like any other non-2xx); the answer's body is read up to MAX_RESPONSE_BYTES; the whole
 * exchange ends by `timeoutMs` or `signal`. Connections are kept alive per checked address (agentFor).
 */
export function send(target: CheckedTarget, headers: Record<string, string>, body: string, signal?: AbortSignal, timeoutMs = DELIVERY_TIMEOUT_MS): Promise<SendResult> {
  // Aborted before it starts (stopped while its target was checked): a listener added now would never fire.
  if (signal?.aborted) return Promise.resolve(STOPPED);
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let done = false;
    const finish = (r: SendResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(r);
    };
    const req = client.request(
      target.url,
      {
        method: 'POST',
        lookup: pinned,
        agent: agentFor(target),
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'inventory-service-webhooks/1' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const answer = () =>
          finish({
            status: res.statusCode ?? null,
            body: Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8').replace(/\uFFFD+$/, ''),
            retryAfter: typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : null,
            error: null,
          });
        answered = answer;
        res.on('data', (chunk: Buffer) => {
          if (size < MAX_RESPONSE_BYTES) chunks.push(chunk);
          size += chunk.length;
          if (size >= MAX_RESPONSE_BYTES) {
            answer();
            res.destroy();
          }
        });
        res.on('end', answer);
        res.on('error', answer);
      },
    );
    // The status came in time but the body did not end (a receiver that streams or stalls it): the status
    // and the body so far are the answer (a 2xx within the timeout is delivered, CONTRACT §9).
    let answered: (() => void) | undefined;
    const timer = setTimeout(() => {
      if (answered) answered();
      else finish({ status: null, body: null, retryAfter: null, error: `no answer within ${timeoutMs / 1000} s` });
      req.destroy();
    }, timeoutMs);
    const onAbort = () => {
      finish(STOPPED);
      req.destroy();
    };
    signal?.addEventListener('abort', onAbort);
    req.on('error', (err: NodeJS.ErrnoException) => finish({ status: null, body: null, retryAfter: null, error: (err.code ? `${err.code}: ` : '') + err.message }));
    req.end(body);
  });
}
