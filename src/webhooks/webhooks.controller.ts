import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../auth/decorators';
import { ShownOnce } from '../common/idempotency.interceptor';
import { PageQuery } from '../common/pagination';
import { Returns } from '../common/responses';
import { UuidParam } from '../common/uuid';
import { CreateWebhookDto, DeliveryQuery, UpdateWebhookDto } from './webhooks.dto';
import { WebhookCreatedResponse, WebhookDeliveryResponse, WebhookResponse } from './webhooks.responses';
import { MAX_WEBHOOKS_PER_TENANT, WebhooksService } from './webhooks.service';

const SHAPE = 'A webhook is {id, url, types, description, isActive, createdAt, updatedAt}.';
const DELIVERY =
  'Each matching event is POSTed as its JSON (as GET /v1/events shows it) with the Standard Webhooks headers webhook-id (the event id), ' +
  'webhook-timestamp and webhook-signature (v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>" keyed with the secret\'s bytes). ' +
  'A 2xx within 15 s is delivered; anything else is retried (after 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 6 h, 12 h, 24 h, or a later Retry-After); ' +
  '410 Gone turns the webhook off. Webhook changes write no events (they are not resources of the feed).';

@ApiTags('webhooks')
@Returns(WebhookResponse)
@Controller('v1/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  @Permissions('events:read')
  @ApiOperation({ summary: 'List webhooks', description: `q: substring of url or description. Newest first (createdAt, id). The secret is never shown. ${SHAPE}` })
  list(@Query() query: PageQuery) {
    return this.webhooks.list(query);
  }

  @Get(':id')
  @Permissions('events:read')
  @ApiOperation({ summary: 'One webhook', description: `404 for an unknown id or another tenant's webhook. The secret is never shown. ${SHAPE}` })
  async get(@UuidParam('id', 'Webhook') id: string) {
    return { data: await this.webhooks.get(id) };
  }

  @Post()
  @Permissions('events:write')
  @Returns(WebhookCreatedResponse)
  @ShownOnce('secret')
  @ApiOperation({
    summary: 'Subscribe a URL to events',
    description:
      `The answer carries \`secret\` this once: a repeat with the same Idempotency-Key answers the same webhook without it (the secret is ` +
      `never stored with the key; a client that lost it deletes the webhook and creates another). url: http:// or https://, a host that is or resolves to a loopback, private, link-local or otherwise ` +
      `non-public address → 400 validation_failed unless listed in WEBHOOK_ALLOWED_HOSTS. types as the feed's (default every event). At most ` +
      `${MAX_WEBHOOKS_PER_TENANT} webhooks per tenant (409 invalid_state). Events of changes after the subscription are delivered. ${DELIVERY} ${SHAPE}`,
  })
  async create(@Body() body: CreateWebhookDto) {
    return { data: await this.webhooks.create(body) };
  }

  @Patch(':id')
  @Permissions('events:write')
  @ApiOperation({ summary: 'Change a webhook', description: `Any field; a new url is checked as on create. isActive: false stops deliveries, true resumes them. ${SHAPE}` })
  async update(@UuidParam('id', 'Webhook') id: string, @Body() body: UpdateWebhookDto) {
    return { data: await this.webhooks.update(id, body) };
  }

  @Delete(':id')
  @HttpCode(204)
  @Permissions('events:write')
  @ApiNoContentResponse({ description: 'Deleted, with its attempts; nothing more is delivered' })
  @ApiOperation({ summary: 'Delete a webhook', description: 'Answers 204 without a body.' })
  async remove(@UuidParam('id', 'Webhook') id: string): Promise<void> {
    await this.webhooks.remove(id);
  }

  @Get(':id/deliveries')
  @Permissions('events:read')
  @Returns(WebhookDeliveryResponse)
  @ApiOperation({
    summary: "A webhook's delivery attempts",
    description:
      'Every attempt, newest first (createdAt, id): {id, eventId, eventType, attempt, status: pending|delivered|failed, responseStatus, error, attemptedAt, nextAttemptAt}; ' +
      'a retry is a new attempt of the same event, listed pending from when it is scheduled. A first attempt is listed once made; one that could not be made yet ' +
      `(a 410 turned the webhook off, or its process stopped, first) is listed pending with attemptedAt null. Filters status, eventId. ${DELIVERY}`,
  })
  deliveries(@UuidParam('id', 'Webhook') id: string, @Query() query: DeliveryQuery) {
    return this.webhooks.deliveries(id, query);
  }
}
