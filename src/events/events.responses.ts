import { ApiProperty } from '@nestjs/swagger';
import { Id, Instant, Text } from '../common/responses';

/** What an event is about: the resource, the ledger transaction, or the item whose stock changed. */
export class EventSubjectResponse {
  @Text('`item`, `transaction`, `purchase_order`, … (the resource type)') type: string;
  @Id() id: string;
}

/** One event of the feed (CONTRACT §9). */
export class EventResponse {
  @Id() id: string;
  @Text('`stock.changed`, `transaction.posted`, `<resource>.created`, `<resource>.updated`') type: string;
  @Instant('when the change\'s transaction began') occurredAt: string;
  @Text('what made the change: `create`, `patch`, the action\'s path word (`submit`, `ship`, `expire`, …); for ledger events the transaction type') action: string;
  @ApiProperty({ type: () => EventSubjectResponse }) subject: EventSubjectResponse;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'the record as its GET returns it after the change; for stock.changed the balance key, qtyDelta and the quantities after the change',
  })
  data: Record<string, unknown>;
}
