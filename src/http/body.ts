import type { IncomingHttpHeaders } from 'node:http';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { AppError } from '../common/errors';

/**
 * The service's JSON bodies, one implementation for both platforms (Express and Fastify hand it the
 * request's byte stream), as clients of the API know them: `application/json` and `application/*+json` in
 * UTF-8 (another charset is 400), `Content-Encoding` gzip, deflate or br inflated (another is 400) with the
 * 1 MiB limit applying to the inflated body (413), an empty body read as `{}`, only an object or an array at
 * the top (`JSON.parse`, so `__proto__` is an ordinary key that validation then refuses), anything malformed
 * 400 `Malformed JSON body: <why>`. Every failure is one of the contract's errors, rendered by the exception
 * filter. No framework body parser runs (Nest's `bodyParser: false`, Fastify's parsers removed).
 */

/** `application/json` and `application/<anything>+json`, with or without parameters. */
const JSON_TYPE = /^application\/(?:json|[^;\s]+\+json)\s*(?:;|$)/i;

/** Largest request body, after decompression (CONTRACT §1). */
export const BODY_LIMIT = 1024 * 1024;

/** Whether the request says a body follows. */
export const hasBody = (headers: IncomingHttpHeaders): boolean =>
  Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined;

/**
 * A body on a write must be JSON: anything else is 400 bad_request rather than silently ignored. Checked when
 * the request arrives, before the body is read.
 */
export function refusedBody(method: string, headers: IncomingHttpHeaders): AppError | undefined {
  if ((method === 'POST' || method === 'PATCH' || method === 'PUT') && hasBody(headers) && !JSON_TYPE.test(headers['content-type'] ?? '')) {
    return new AppError(400, 'bad_request', 'Request body must be JSON (Content-Type: application/json)');
  }
  return undefined;
}

/**
 * Whether a body is read at all: not on GET and HEAD; otherwise when one follows or a Content-Type says
 * what it is (an empty `application/json` body is `{}`). Fastify's own rule, kept on Express.
 */
export function readsBody(method: string, headers: IncomingHttpHeaders): boolean {
  if (method === 'GET' || method === 'HEAD') return false;
  return headers['content-type'] !== undefined || hasBody(headers);
}

const DECOMPRESS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

const tooLarge = () => new AppError(413, 'payload_too_large', 'Request body exceeds 1 MiB');

/**
 * Reads the body from `stream` (the request's bytes), inflates it, and parses it when it is JSON; a body of
 * another type (left after `refusedBody`: an empty action body, or a body on a method that takes none) reads
 * as no body (`undefined`).
 */
export async function readBody(headers: IncomingHttpHeaders, stream: Readable): Promise<unknown> {
  if (Number(headers['content-length'] ?? 0) > BODY_LIMIT) throw tooLarge();
  let source: Readable = stream;
  const header = headers['content-encoding'];
  // Nothing to inflate without a body (a GET, an empty POST).
  if (header !== undefined && hasBody(headers)) {
    const encoding = String(header).trim().toLowerCase();
    if (encoding !== 'identity') {
      const decompress = DECOMPRESS[encoding];
      if (!decompress) throw new AppError(400, 'bad_request', `Unsupported request body: unsupported content encoding "${encoding}"`);
      const inflate = decompress();
      stream.on('error', (err) => inflate.destroy(err));
      source = stream.pipe(inflate);
    }
  }
  const bytes = await collect(source, stream);
  const type = headers['content-type'];
  if (type === undefined || !JSON_TYPE.test(type)) return undefined;
  return parseJson(type, bytes);
}

/** The bytes of `source` up to BODY_LIMIT (413 past it: reading stops, the rest is left to Node to discard). */
function collect(source: Readable, raw: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const onData = (chunk: Buffer) => {
      length += chunk.length;
      if (length > BODY_LIMIT) {
        finish(tooLarge());
        if (source !== raw) source.destroy();
        return;
      }
      chunks.push(chunk);
    };
    const finish = (err?: Error) => {
      source.removeListener('data', onData);
      source.removeListener('end', onEnd);
      source.removeListener('error', finish);
      raw.removeListener('aborted', onAborted);
      if (err) reject(err);
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length));
    };
    const onEnd = () => finish();
    const onAborted = () => finish(new AppError(400, 'bad_request', 'Request body: the client aborted the request'));
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', finish);
    raw.once('aborted', onAborted);
  });
}

function parseJson(type: string, body: Buffer): unknown {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(type)?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new AppError(400, 'bad_request', `Unsupported request body: unsupported charset "${charset.toUpperCase()}"`);
  }
  const text = body.toString('utf8');
  const first = /\S/.exec(text)?.[0];
  if (first === undefined) return {};
  if (first !== '{' && first !== '[') throw malformed('the body must be a JSON object or array');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw malformed((err as Error).message);
  }
}

const malformed = (why: string) => new AppError(400, 'bad_request', `Malformed JSON body: ${why}`);
