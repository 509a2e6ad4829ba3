import { Module } from '@nestjs/common';
import { SecretBox } from './secret-box';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/**
 * Webhooks (CONTRACT §9): the subscriptions (`/v1/webhooks…`) and their delivery from the event feed by
 * the in-process dispatcher (WEBHOOKS_ENABLED; README "Webhooks").
 */
@Module({
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhookDispatcher, SecretBox],
})
export class WebhooksModule {}
