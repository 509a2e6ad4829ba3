import { HTTP_CODE_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { isNotAResource, RESPONSE_KEY } from '../common/responses';
import type { ResourceEventKind } from '../database/attempt';

/** What a write route's events are: `<resource>.<created|updated>` with its action (CONTRACT §9). */
export type { ResourceEventKind } from '../database/attempt';

const kinds = new WeakMap<Function, ResourceEventKind | null>();

/**
 * The event a POST or PATCH route writes once its handler has answered, from the route's metadata: the
 * resource type from its response class (`@Returns(PurchaseOrderResponse)` → `purchase_order`); a route
 * answering 201 creates (`create`), a PATCH patches (`patch`), any other POST is the action its path
 * ends with (`/submit`, `/approve`, `/ship`, `/allocate`, …). Null for routes without one (reads, and
 * routes answering a class marked `@NotAResource()`: ledger postings, webhooks). Computed once per handler.
 */
export function resourceEventOf(method: string, handler: Function, controller: Function): ResourceEventKind | null {
  if (method !== 'POST' && method !== 'PATCH') return null;
  const known = kinds.get(handler);
  if (known !== undefined) return known;
  const returns = (Reflect.getMetadata(RESPONSE_KEY, handler) ?? Reflect.getMetadata(RESPONSE_KEY, controller)) as Function | [Function] | undefined;
  let kind: ResourceEventKind | null = null;
  // The route's path as declared (controller and handler paths: the same on every HTTP platform).
  const url = [Reflect.getMetadata(PATH_METADATA, controller), Reflect.getMetadata(PATH_METADATA, handler)].filter((p) => typeof p === 'string').join('/');
  if (returns && !Array.isArray(returns) && !isNotAResource(returns) && url) {
    const subjectType = returns.name.replace(/Response$/, '').replace(/(?<=[a-z0-9])([A-Z])/g, (c) => `_${c}`).toLowerCase();
    const status = (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? (method === 'POST' ? 201 : 200);
    const created = method === 'POST' && status === 201;
    const action = created ? 'create' : method === 'PATCH' ? 'patch' : url.split('/').filter(Boolean).pop()!;
    kind = { type: `${subjectType}.${created ? 'created' : 'updated'}`, subjectType, action };
  }
  kinds.set(handler, kind);
  return kind;
}
