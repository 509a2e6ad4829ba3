import { HTTP_CODE_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { RESPONSE_KEY } from '../common/responses';

/** What a write route's events are: `<resource>.<created|updated>` with its action (CONTRACT §9). */
export interface ResourceEventKind {
  type: string;
  subjectType: string;
  action: string;
}

/**
 * Response classes whose records are not `<resource>.*` events: a ledger transaction's events are the
 * ledger's own (`transaction.posted`, `stock.changed`, written by its posting statement); webhooks are not
 * among the feed's resources (CONTRACT §9), and a created webhook's answer carries its secret, which must
 * never reach the feed (nor, through it, any webhook).
 */
const NOT_RESOURCES = new Set(['TransactionResponse', 'WebhookResponse', 'WebhookCreatedResponse']);

const kinds = new WeakMap<Function, ResourceEventKind | null>();

/**
 * The event a POST or PATCH route writes once its handler has answered, from the route's metadata: the
 * resource type from its response class (`@Returns(PurchaseOrderResponse)` → `purchase_order`); a route
 * answering 201 creates (`create`), a PATCH patches (`patch`), any other POST is the action its path
 * ends with (`/submit`, `/approve`, `/ship`, `/allocate`, …). Null for routes without one (reads, ledger
 * postings). Computed once per handler.
 */
export function resourceEventOf(method: string, handler: Function, controller: Function): ResourceEventKind | null {
  if (method !== 'POST' && method !== 'PATCH') return null;
  const known = kinds.get(handler);
  if (known !== undefined) return known;
  const returns = (Reflect.getMetadata(RESPONSE_KEY, handler) ?? Reflect.getMetadata(RESPONSE_KEY, controller)) as Function | [Function] | undefined;
  let kind: ResourceEventKind | null = null;
  // The route's path as declared (controller and handler paths: the same on every HTTP platform).
  const url = [Reflect.getMetadata(PATH_METADATA, controller), Reflect.getMetadata(PATH_METADATA, handler)].filter((p) => typeof p === 'string').join('/');
  if (returns && !Array.isArray(returns) && !NOT_RESOURCES.has(returns.name) && url) {
    const subjectType = returns.name.replace(/Response$/, '').replace(/(?<=[a-z0-9])([A-Z])/g, (c) => `_${c}`).toLowerCase();
    const status = (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? (method === 'POST' ? 201 : 200);
    const created = method === 'POST' && status === 201;
    const action = created ? 'create' : method === 'PATCH' ? 'patch' : url.split('/').filter(Boolean).pop()!;
    kind = { type: `${subjectType}.${created ? 'created' : 'updated'}`, subjectType, action };
  }
  kinds.set(handler, kind);
  return kind;
}
