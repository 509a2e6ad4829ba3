import { canonicalJson, documentIdempotencyKey, requestHash, shouldStoreFailure } from './idempotency';

describe('idempotency request identity', () => {
  it('canonical JSON ignores key order and undefined fields, keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null }, u: undefined })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson('x')).toBe('"x"');
  });

  it('hashes method, url and body', () => {
    const h = requestHash('post', '/v1/uoms', { code: 'A', decimals: 0 });
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(requestHash('POST', '/v1/uoms', { decimals: 0, code: 'A' })).toBe(h);
    expect(requestHash('POST', '/v1/uoms', { code: 'B', decimals: 0 })).not.toBe(h);
    expect(requestHash('POST', '/v1/items', { code: 'A', decimals: 0 })).not.toBe(h);
    expect(requestHash('PATCH', '/v1/uoms', { code: 'A', decimals: 0 })).not.toBe(h);
    expect(requestHash('POST', '/v1/uoms', [{ code: 'A', decimals: 0 }])).not.toBe(h);
  });

  it('documents the header on POST operations only', () => {
    const doc = documentIdempotencyKey({
      paths: { '/a': { post: { parameters: [{ name: 'x' }] }, get: {} } as { post?: { parameters?: unknown[] } }, '/b': {} },
    });
    expect(doc.paths['/a'].post!.parameters).toEqual([{ name: 'x' }, expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false })]);
    expect(doc.paths['/b']).toEqual({});
  });

  it('stores client errors of an executed request, not 429, idempotency conflicts or server errors', () => {
    expect(shouldStoreFailure(400, 'validation_failed')).toBe(true);
    expect(shouldStoreFailure(404, 'not_found')).toBe(true);
    expect(shouldStoreFailure(409, 'insufficient_stock')).toBe(true);
    expect(shouldStoreFailure(409, 'duplicate')).toBe(true);
    expect(shouldStoreFailure(412, 'version_conflict')).toBe(true);
    expect(shouldStoreFailure(409, 'idempotency_conflict')).toBe(false);
    expect(shouldStoreFailure(429, 'rate_limited')).toBe(false);
    expect(shouldStoreFailure(500, 'internal_error')).toBe(false);
    expect(shouldStoreFailure(503, 'service_unavailable')).toBe(false);
    expect(shouldStoreFailure(201, 'created')).toBe(false);
  });
});
