import { ApiPropertyOptional } from '@nestjs/swagger';
import { Flag, Id, Instant, InstantOrNull, Int, IntOrNull, NotAResource, OneOf, Strings, Text, TextOrNull } from '../common/responses';
import { DELIVERY_STATUSES } from './webhook.entity';

/** A webhook subscription (CONTRACT §9); its secret is answered once, by the create. Not a feed resource. */
@NotAResource()
export class WebhookResponse {
  @Id() id: string;
  @Text('where events are POSTed') url: string;
  @Strings('exact types and `prefix.*` entries; empty: every event') types: string[];
  @TextOrNull() description: string | null;
  @Flag('false: nothing is delivered (set by PATCH, or by a 410 Gone answer)') isActive: boolean;
  @Instant() createdAt: string;
  @Instant() updatedAt: string;
}

/** The create's answer: the webhook and its signing secret, shown this once (not in an Idempotency-Key replay of it). */
export class WebhookCreatedResponse extends WebhookResponse {
  @ApiPropertyOptional({
    type: String,
    description: '`whsec_` + base64 of 32 random bytes: the Standard Webhooks signing secret; shown only in this answer, and absent when a repeat with the same Idempotency-Key replays it',
  })
  secret?: string;
}

/** One delivery attempt of an event to a webhook. */
export class WebhookDeliveryResponse {
  @Id() id: string;
  @Id('the event, also sent as `webhook-id`') eventId: string;
  @Text() eventType: string;
  @Int('1 for the first attempt of the event, +1 per retry') attempt: number;
  @OneOf(DELIVERY_STATUSES, 'pending: not yet made (due at nextAttemptAt); delivered: answered 2xx; failed: any other answer or none') status: string;
  @IntOrNull('the HTTP status the receiver answered; null while pending or when no answer came') responseStatus: number | null;
  @TextOrNull('why it failed: the status answered, no answer within 15 s, a refused target, a connection error') error: string | null;
  @InstantOrNull('when the attempt was made (null while pending)') attemptedAt: string | null;
  @InstantOrNull('pending: when it is due; failed: when the next attempt is due (null when none follows)') nextAttemptAt: string | null;
}
