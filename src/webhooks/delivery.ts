import { createHmac } from 'node:crypto';
import type { LookupFunction } from 'node:net';
import { Pool } from 'undici';
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
 * Keep-alive connections per checked address (undici pools: a request costs the delivery thread about
 * two thirds of the CPU of node:http's client): one pool per (scheme, host name, port, address), whose
 * connections are made to the address that was checked for it (its host name stays in the Host header
 * and the TLS server name), so a host name that resolves elsewhere later gets a pool of its own, after its
 * own check. One request per connection at a time (no pipelining: a receiver or proxy that mishandles it
 * would leave attempts unanswered). No redirect is followed (undici follows none unless told). At most
 * MAX_POOLS pools are kept.
 */
const MAX_POOLS = 256;
const pools = new Map<string, Pool>();
function poolFor(target: CheckedTarget): Pool {
  const key = `${target.url.protocol}//${target.url.host}@${target.address}`;
  let pool = pools.get(key);
  if (pool) pools.delete(key); // re-inserted below: most recently used last
  else {
    const pinned: LookupFunction = (_host, options, callback) => {
      if ((options as { all?: boolean }).all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: target.address, family: target.family }]);
      else callback(null, target.address, target.family);
    };
    pool = new Pool(target.url.origin, {
      connections: 64,
      pipelining: 1,
      connect: { lookup: pinned, timeout: DELIVERY_TIMEOUT_MS },
      keepAliveTimeout: DELIVERY_TIMEOUT_MS,
      headersTimeout: DELIVERY_TIMEOUT_MS,
      bodyTimeout: DELIVERY_TIMEOUT_MS,
    });
  }
  pools.set(key, pool);
  // Past MAX_POOLS the least recently used is closed once its requests in flight have ended.
  for (const [oldest, old] of pools) {
    if (pools.size <= MAX_POOLS) break;
    pools.delete(oldest);
    void old.close().catch(() => undefined);
  }
  return pool;
}

/** Closes every kept-alive delivery connection (the service is stopping). */
export function closeDeliveryConnections(): void {
  for (const pool of pools.values()) void pool.destroy().catch(() => undefined);
  pools.clear();
}

const noAnswer = (error: string): SendResult => ({ status: null, body: null, retryAfter: null, error });

/**
 * POSTs `body` to the checked target, connecting to the address that was checked (poolFor), with the
 * Standard Webhooks headers. No redirect is followed (a 3xx is an answer like any other non-2xx); the
 * answer's body is read up to MAX_RESPONSE_BYTES; the whole exchange ends by `timeoutMs` or `signal`.
 */
export async function send(target: CheckedTarget, headers: Record<string, string>, body: string, signal?: AbortSignal, timeoutMs = DELIVERY_TIMEOUT_MS): Promise<SendResult> {
  const ending = new AbortController();
  const timer = setTimeout(() => ending.abort(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  const onAbort = () => ending.abort(new Error('aborted: the service is stopping'));
  signal?.addEventListener('abort', onAbort);
  try {
    const res = await poolFor(target).request({
      path: `${target.url.pathname}${target.url.search}`,
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'inventory-service-webhooks/1' },
      body,
      signal: ending.signal,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= MAX_RESPONSE_BYTES) break; // the rest is not read: the connection is closed
      }
    } catch (err) {
      if (ending.signal.aborted) throw err; // past the timeout, or stopping: no answer, as before the status came
      // the answer's status and headers came; its body broke off: kept as far as it came
    }
    if (size >= MAX_RESPONSE_BYTES) res.body.destroy();
    const retryAfter = res.headers['retry-after'];
    return {
      status: res.statusCode,
      body: Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8').replace(/\uFFFD+$/, ''),
      retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
      error: null,
    };
  } catch (err) {
    if (ending.signal.aborted) return noAnswer((ending.signal.reason as Error).message);
    const e = err as NodeJS.ErrnoException;
    return noAnswer((e.code ? `${e.code}: ` : '') + e.message);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
