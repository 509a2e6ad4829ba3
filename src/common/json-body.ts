import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { AppError } from './errors';

/** `application/json` and `application/<anything>+json`, with or without parameters. */
const JSON_TYPE = /^application\/(?:json|[^;\s]+\+json)\s*(?:;|$)/i;

/** Largest request body, after decompression (CONTRACT §1). */
export const BODY_LIMIT = 1024 * 1024;

/**
 * A body on a write must be JSON: anything else is 400 bad_request rather than silently ignored.
 * A Fastify onRequest hook: it runs before the body is read.
 */
export function requireJsonBody(req: FastifyRequest, _reply: unknown, done: (err?: Error) => void): void {
  if (hasBody(req.headers) && (req.method === 'POST' || req.method === 'PATCH' || req.method === 'PUT') && !JSON_TYPE.test(req.headers['content-type'] ?? '')) {
    return done(new AppError(400, 'bad_request', 'Request body must be JSON (Content-Type: application/json)'));
  }
  done();
}

/** Whether the request says a body follows. */
const hasBody = (headers: FastifyRequest['headers']) => Number(headers['content-length'] ?? 0) > 0 || headers['transfer-encoding'] !== undefined;

const DECOMPRESS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * The service's JSON bodies on Fastify, as clients of the API know them: `application/json` and
 * `application/*+json` in UTF-8 (another charset is 400), `Content-Encoding` gzip, deflate or br inflated
 * (another is 400) with the 1 MiB limit applying to the inflated body (413), an empty body read as `{}`,
 * only an object or an array at the top (`JSON.parse`, so `__proto__` is an ordinary key that validation
 * then refuses), anything malformed 400 `Malformed JSON body: <why>`. Fastify's own parsers (JSON and text) are
 * replaced: every failure is one of the contract's errors, rendered by the exception filter.
 */
export function installJsonBody(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  const options = { parseAs: 'buffer' as const, bodyLimit: BODY_LIMIT };
  fastify.addContentTypeParser('application/json', options, parseJson);
  // Fastify matches a RegExp against the whole Content-Type, parameters included.
  fastify.addContentTypeParser(/^application\/[^;\s]+\+json\s*(?:;|$)/i, options, parseJson);
  // Any other type: a write's body was refused before it was read (requireJsonBody), so what is left is an
  // empty body (an action sent with a client's default Content-Type) or a body on a method that takes none:
  // both read as no body, as before.
  fastify.addContentTypeParser('*', options, (_request, _body, done) => done(null, undefined));
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    const header = request.headers['content-encoding'];
    // Nothing to inflate without a body (a GET, an empty POST).
    if (header === undefined || !hasBody(request.headers)) return done(null, payload);
    const encoding = String(header).trim().toLowerCase();
    if (encoding === 'identity') return done(null, payload);
    const decompress = DECOMPRESS[encoding];
    if (!decompress) return done(new AppError(400, 'bad_request', `Unsupported request body: unsupported content encoding "${encoding}"`));
    const inflated = payload.pipe(decompress()) as Transform & { receivedEncodedLength: number };
    // Fastify checks Content-Length against the bytes received, not against the inflated ones.
    inflated.receivedEncodedLength = 0;
    payload.on('data', (chunk: Buffer) => (inflated.receivedEncodedLength += chunk.length));
    payload.on('error', (err) => inflated.destroy(err));
    done(null, inflated);
  });
}

function parseJson(request: FastifyRequest, body: Buffer | string, done: (err: Error | null, body?: unknown) => void): void {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(String(request.headers['content-type'] ?? ''))?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    return done(new AppError(400, 'bad_request', `Unsupported request body: unsupported charset "${charset.toUpperCase()}"`));
  }
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const first = /\S/.exec(text)?.[0];
  if (first === undefined) return done(null, {});
  if (first !== '{' && first !== '[') return done(malformed('the body must be a JSON object or array'));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return done(malformed((err as Error).message));
  }
  done(null, parsed);
}

const malformed = (why: string) => new AppError(400, 'bad_request', `Malformed JSON body: ${why}`);
