import type { INestApplication } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { PERMISSIONS_KEY, PUBLIC_KEY } from '../auth/decorators';
import type { ErrorCode } from './errors';
import { FEED_KEY, RESPONSE_CLASSES, RESPONSE_KEY } from './responses';
import { VERSIONED_KEY } from './versioning';

type Operation = {
  operationId?: string;
  summary?: string;
  description?: string;
  parameters?: Array<{ in: string; name: string }>;
  requestBody?: unknown;
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
  security?: unknown[];
  'x-permissions'?: string[];
};

const ERROR_CODES: ErrorCode[] = [
  'validation_failed', 'bad_request', 'unauthorized', 'forbidden', 'not_found', 'duplicate', 'invalid_state', 'insufficient_stock',
  'over_receipt', 'idempotency_conflict', 'version_conflict', 'cursor_expired', 'payload_too_large', 'rate_limited', 'internal_error', 'service_unavailable',
];

const SCHEMAS = {
  ErrorBody: {
    type: 'object',
    required: ['error', 'message', 'status'],
    description: 'Every error answer (CONTRACT §2). A 400 validation_failed lists at most 50 details.',
    properties: {
      error: { type: 'string', enum: ERROR_CODES },
      message: { type: 'string' },
      status: { type: 'integer', minimum: 400, maximum: 599 },
      details: {
        type: 'array',
        maxItems: 50,
        items: {
          type: 'object',
          required: ['message'],
          properties: { field: { type: 'string', example: 'lines[0].qty' }, message: { type: 'string' } },
          additionalProperties: true,
        },
      },
    },
  },
  Record: {
    type: 'object',
    required: ['data'],
    description: 'One record: its fields are listed in the operation description.',
    properties: { data: { type: 'object', additionalProperties: true } },
  },
  List: {
    type: 'object',
    required: ['data', 'count', 'limit', 'offset', 'nextCursor'],
    description: 'A page of records (fields in the operation description), the total count of matches, the page bounds and the next page\'s cursor.',
    properties: {
      data: { type: 'array', items: { type: 'object', additionalProperties: true } },
      count: { type: 'integer', minimum: 0 },
      limit: { type: 'integer', minimum: 1, maximum: 500 },
      offset: { type: 'integer', minimum: 0 },
      nextCursor: { type: 'string', nullable: true },
    },
  },
};

const error = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } });

/**
 * Completes the generated OpenAPI description from what the routes themselves declare, so a new route
 * cannot forget a part: its permission (`@Permissions`, or public), the bearer requirement, the error
 * responses it can give (by method, parameters, body and `@IfMatch`), and the success envelope. Routes
 * document their own summary, parameters (`@UuidParam` is `format: uuid`, `@IfMatch` the header) and
 * bodies (DTOs).
 */
export function completeDocument(doc: OpenAPIObject, app: INestApplication): OpenAPIObject {
  const handlers = new Map<string, { handler: object; controller: object }>();
  for (const wrapper of app.get(DiscoveryService).getControllers()) {
    const controller = wrapper.metatype as (new (...args: never[]) => object) | undefined;
    if (!controller?.prototype) continue;
    for (const name of Object.getOwnPropertyNames(controller.prototype)) {
      if (name !== 'constructor') handlers.set(`${controller.name}_${name}`, { handler: controller.prototype[name as keyof object], controller });
    }
  }
  doc.components = { ...doc.components, schemas: { ...doc.components?.schemas, ...SCHEMAS } } as OpenAPIObject['components'];
  doc.info.description =
    'Multi-tenant inventory management over HTTP/JSON: catalog (units, items, facilities, locations), the inventory ledger ' +
    '(adjustments, balances, availability, transactions, lots, serials, reservations, transfers, counts, reorder policies), ' +
    'procurement, sales and production. Every /v1 route needs a bearer token (tenant and permissions in its claims); each ' +
    "operation names its permission. Errors share one shape (ErrorBody). Writes take an optional Idempotency-Key; versioned " +
    'documents take If-Match and answer with an ETag. Quantities and amounts are JSON numbers: quantities have at most 6 ' +
    'decimals and at most 999,999,999.999999 in a request, and so has unitPrice; amounts (unitPrice, totalAmount) are exact ' +
    'up to 15 significant digits. JSON null in an optional field is the field left out, except where the field is nullable ' +
    '(null clears it); in a required field it is 400 validation_failed naming it.';

  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, Operation>)) {
      const found = op.operationId ? handlers.get(op.operationId) : undefined;
      const meta = <T>(key: string): T | undefined =>
        found ? ((Reflect.getMetadata(key, found.handler) ?? Reflect.getMetadata(key, found.controller)) as T | undefined) : undefined;
      const isPublic = !!meta<boolean>(PUBLIC_KEY);
      const permissions = meta<string[]>(PERMISSIONS_KEY) ?? [];
      const versioned = !!meta<boolean>(VERSIONED_KEY);
      const access = isPublic ? 'Public: no token.' : `Permission: \`${permissions.join('`, `')}\`.`;
      op.description = op.description ? `${access}\n\n${op.description}` : access;
      if (isPublic) op.security = [];
      else op['x-permissions'] = permissions;

      // The success answer: a page for a collection GET, else one record.
      // A 204 has no body (DELETE): nothing to describe.
      const success = Object.keys(op.responses ?? {}).find((code) => code.startsWith('2') && code !== '204');
      const isList = method === 'get' && !/\}$/.test(path) && path.startsWith('/v1/');
      // The resource's response class (`@Returns`) as one record or a page of them; free-form only where a
      // route names none (none under /v1 does: test/platform/openapi checks it).
      const returns = meta<Function | [Function]>(RESPONSE_KEY);
      const resource = returns && { $ref: `#/components/schemas/${(Array.isArray(returns) ? returns[0] : returns).name}` };
      const schema = isPublic
        ? { type: 'object', additionalProperties: true }
        : resource
          ? meta<boolean>(FEED_KEY) ? feedOf(resource) : isList && !Array.isArray(returns) ? pageOf(resource) : { type: 'object', required: ['data'], additionalProperties: false, properties: { data: Array.isArray(returns) ? { type: 'array', items: resource } : resource } }
          : { $ref: `#/components/schemas/${isList ? 'List' : 'Record'}` };
      if (success && (!op.responses[success].content || resource)) op.responses[success].content = { 'application/json': { schema } };
      // A single versioned record answers with its version as ETag (setETag, in UnitOfWorkInterceptor), for the next If-Match.
      if (success && !isPublic && !isList)
        (op.responses[success] as { headers?: object }).headers = {
          ETag: { description: 'The version of a versioned record, e.g. "3": send it back as If-Match', schema: { type: 'string' } },
        };

      if (isPublic) {
        if (path === '/health') op.responses['503'] = { description: 'The database is not reachable or not migrated yet (readiness fails)' };
        continue;
      }
      const params = op.parameters ?? [];
      const hasBody = !!op.requestBody;
      const responses: Record<string, ReturnType<typeof error>> = {};
      if (hasBody || params.some((p) => p.in === 'query' || p.in === 'header'))
        responses['400'] = error('validation_failed: the body, query or a header is not valid (details list each field); bad_request: malformed JSON or not JSON');
      responses['401'] = error('unauthorized: no token, or it is malformed, expired, for another audience or signed by an unknown key (WWW-Authenticate: Bearer)');
      responses['403'] = error(`forbidden: the token lacks ${permissions.length ? `\`${permissions.join('`, `')}\`` : 'the permission'}`);
      if (params.some((p) => p.in === 'path') || hasBody)
        responses['404'] = error("not_found: no such record in the token's tenant (also a malformed id in the path, another tenant's id, or an unknown id in the body, named by its field)");
      if (method === 'post' || method === 'patch')
        responses['409'] = error('duplicate, invalid_state (not allowed in the current state; the message names it), insufficient_stock or over_receipt (details list every shortfall), idempotency_conflict');
      if (meta<boolean>(FEED_KEY)) responses['410'] = error('cursor_expired: the cursor is older than the retention of events (EVENT_RETENTION_DAYS); start again without `after`');
      if (versioned) responses['412'] = error('version_conflict: If-Match names an older version of the document; reload it and retry');
      if (hasBody) responses['413'] = error('payload_too_large: the body exceeds 1 MiB');
      responses['429'] = error("rate_limited: the tenant's requests per minute are used up (Retry-After)");
      responses['503'] = error('service_unavailable: the database is unreachable, busy past a timeout, or the service is shutting down (Retry-After); a write whose COMMIT was in flight says so');
      op.responses = { ...op.responses, ...responses };
    }
  }
  // Response classes list every field: nothing else may appear in an answer.
  for (const type of RESPONSE_CLASSES) closeSchema(doc, type.name);
  return doc;
}

/** A page of `item` records (CONTRACT §1). */
const pageOf = (item: object) => ({
  type: 'object',
  required: ['data', 'count', 'limit', 'offset', 'nextCursor'],
  additionalProperties: false,
  properties: {
    data: { type: 'array', items: item },
    count: { type: 'integer', minimum: 0, description: 'all records matching the filters' },
    limit: { type: 'integer', minimum: 0 },
    offset: { type: 'integer', minimum: 0 },
    nextCursor: { type: 'string', nullable: true, description: 'fetches the next page (`after=`), in the same order with the same filters; null on the last page' },
  },
});

/** A page of a feed (the event feed, CONTRACT §9): no count; `nextCursor` is always a string. */
const feedOf = (item: object) => ({
  type: 'object',
  required: ['data', 'nextCursor', 'limit'],
  additionalProperties: false,
  properties: {
    data: { type: 'array', items: item },
    nextCursor: { type: 'string', description: 'poll again with `after=<nextCursor>` for what came after (an empty page when nothing did)' },
    limit: { type: 'integer', minimum: 1 },
  },
});

/** A component schema and those it refers to, closed: `additionalProperties: false`. */
function closeSchema(doc: OpenAPIObject, name: string, seen = new Set<string>()): void {
  if (seen.has(name)) return;
  seen.add(name);
  const schema = doc.components?.schemas?.[name] as { properties?: Record<string, Record<string, unknown>>; additionalProperties?: boolean } | undefined;
  if (!schema?.properties) return;
  schema.additionalProperties = false;
  for (const p of Object.values(schema.properties)) {
    const ref = (p.$ref ?? (p.items as { $ref?: string } | undefined)?.$ref ?? (p.allOf as Array<{ $ref?: string }> | undefined)?.[0]?.$ref) as string | undefined;
    if (ref) closeSchema(doc, ref.split('/').pop()!, seen);
  }
}
