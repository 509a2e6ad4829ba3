import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { cursorOf, newestFirst } from '../common/cursor';
import { invalidField, invalidState, notFound } from '../common/errors';
import { likePattern, page, PageQuery } from '../common/pagination';
import { Settings } from '../config/settings';
import { keysetPageOf } from '../database/keyset-page';
import { UnitOfWork } from '../database/unit-of-work';
import { typeFilterOf } from '../events/events.service';
import { SecretBox } from './secret-box';
import { checkTarget, TargetRefused } from './targets';
import { Webhook, WebhookDelivery } from './webhook.entity';
import { CreateWebhookDto, DeliveryQuery, UpdateWebhookDto } from './webhooks.dto';
import { currentFeedPosition, lockTenantWebhooks } from './webhooks.sql';

/** Most webhooks one tenant may have. */
export const MAX_WEBHOOKS_PER_TENANT = 20;

/** The lists' documented orders (cursor paging: src/common/cursor.ts). */
const WEBHOOKS = newestFirst('webhooks', 'w');
const DELIVERIES = newestFirst('webhook_deliveries', 'd');

export const webhookView = (w: Webhook) => ({
  id: w.id,
  url: w.url,
  types: w.types,
  description: w.description,
  isActive: w.isActive,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
});

export const deliveryView = (d: WebhookDelivery) => ({
  id: d.id,
  eventId: d.eventId,
  eventType: d.eventType,
  attempt: d.attempt,
  status: d.status,
  responseStatus: d.responseStatus,
  error: d.error,
  attemptedAt: d.attemptedAt,
  nextAttemptAt: d.nextAttemptAt,
});

/**
 * Webhook subscriptions (CONTRACT §9), through the tenant repository. The secret is made here, answered
 * once and stored encrypted (SecretBox); the URL's target is checked (targets.ts) on create and on change.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly box: SecretBox,
    private readonly settings: Settings,
  ) {}

  private get repo() {
    return this.uow.repository(Webhook);
  }

  /** Newest first (createdAt, then id); q: substring of url or description. */
  async list(query: PageQuery) {
    const at = cursorOf(WEBHOOKS, query);
    const qb = this.repo.createQueryBuilder('w');
    if (query.q) qb.where('(w.url ILIKE :q OR w.description ILIKE :q)', { q: likePattern(query.q) });
    const { rows, count, nextCursor } = await keysetPageOf(qb, WEBHOOKS, query, at);
    return page(rows.map(webhookView), count, query, nextCursor);
  }

  async get(id: string) {
    return webhookView(await this.find(id));
  }

  private async find(id: string, lock?: 'update'): Promise<Webhook> {
    const row = await this.repo.findOne({ id }, { lock });
    if (!row) throw notFound('Webhook');
    return row;
  }

  /** A new webhook, its secret answered this once; at most MAX_WEBHOOKS_PER_TENANT per tenant (409 invalid_state). */
  async create(dto: CreateWebhookDto) {
    await this.checkUrl(dto.url);
    const types = this.checkTypes(dto.types ?? []);
    const m = this.uow.manager;
    const tenantId = this.uow.tenantId;
    // Creations of one tenant queue here, so the cap holds however many arrive at once.
    await lockTenantWebhooks(m, tenantId);
    if ((await this.repo.count()) >= MAX_WEBHOOKS_PER_TENANT)
      throw invalidState(`A tenant has at most ${MAX_WEBHOOKS_PER_TENANT} webhooks; delete one to add another`);
    const id = randomUUID();
    const secret = SecretBox.newSecret();
    const position = await currentFeedPosition(m);
    await this.repo.insert({
      id, url: dto.url, types, description: dto.description ?? null, isActive: true,
      secretCiphertext: this.box.seal(secret, tenantId, id), feedTxid: position.txid, feedSeq: position.seq,
    });
    return { ...(await this.get(id)), secret };
  }

  /** The given fields (description's null clears it); a new url is checked as on create. */
  async update(id: string, dto: UpdateWebhookDto) {
    const current = await this.find(id, 'update');
    const fields: Partial<Webhook> = {};
    if (dto.url !== undefined && dto.url !== current.url) {
      await this.checkUrl(dto.url);
      fields.url = dto.url;
    }
    if (dto.types !== undefined) fields.types = this.checkTypes(dto.types);
    if (dto.description !== undefined) fields.description = dto.description;
    if (dto.isActive !== undefined) fields.isActive = dto.isActive;
    if (Object.keys(fields).length) await this.repo.update({ id }, fields);
    return this.get(id);
  }

  /** Deletes the webhook and its attempts (pending ones are not made). */
  async remove(id: string): Promise<void> {
    if (!(await this.repo.delete({ id }))) throw notFound('Webhook');
  }

  /** Every attempt, newest first (createdAt, then id); filters status and eventId. */
  async deliveries(id: string, query: DeliveryQuery) {
    await this.find(id);
    const at = cursorOf(DELIVERIES, query);
    const qb = this.uow.repository(WebhookDelivery).createQueryBuilder('d').where('d.webhookId = :id', { id });
    if (query.status) qb.andWhere('d.status = :status', { status: query.status });
    if (query.eventId) qb.andWhere('d.eventId = :eventId', { eventId: query.eventId });
    const { rows, count, nextCursor } = await keysetPageOf(qb, DELIVERIES, query, at);
    return page(rows.map(deliveryView), count, query, nextCursor);
  }

  private async checkUrl(url: string): Promise<void> {
    try {
      await checkTarget(url, this.settings.WEBHOOK_ALLOWED_HOSTS);
    } catch (err) {
      if (err instanceof TargetRefused) throw invalidField('url', err.message);
      throw err;
    }
  }

  /** The types as the feed parses them (400 naming types), each once. */
  private checkTypes(types: string[]): string[] {
    typeFilterOf(types);
    return [...new Set(types)];
  }
}
