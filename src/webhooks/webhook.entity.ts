import { Column, CreateDateColumn, Entity, UpdateDateColumn } from 'typeorm';
import { TenantEntity } from '../common/entity';

/** A webhook subscription (CONTRACT §9) and its position in the event feed (migrations/1763780000013-Webhooks.ts). */
@Entity('webhooks')
export class Webhook extends TenantEntity {
  @Column('text')
  url: string;

  /** Exact event types and `prefix.*` entries, as the feed's `types`; empty: every event. */
  @Column('text', { array: true, default: () => "'{}'" })
  types: string[];

  @Column('text', { nullable: true })
  description: string | null;

  @Column('boolean', { name: 'is_active', default: () => 'true' })
  isActive: boolean;

  /** The secret, encrypted with the service's key (secret-box.ts); never answered after the create. */
  @Column('text', { name: 'secret_ciphertext', select: false })
  secretCiphertext: string;

  /** The feed position up to which segments have been leased (their events sent, or being sent). */
  @Column('bigint', { name: 'feed_txid', select: false })
  feedTxid: string;

  @Column('bigint', { name: 'feed_seq', select: false })
  feedSeq: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** One delivery attempt of one event to one webhook; a pending one is due work (webhook-dispatcher.ts). */
@Entity('webhook_deliveries')
export class WebhookDelivery extends TenantEntity {
  @Column('uuid', { name: 'webhook_id' })
  webhookId: string;

  @Column('uuid', { name: 'event_id' })
  eventId: string;

  @Column('text', { name: 'event_type' })
  eventType: string;

  @Column('timestamptz', { name: 'occurred_at' })
  occurredAt: Date;

  @Column('integer')
  attempt: number;

  @Column('text')
  status: DeliveryStatus;

  @Column('integer', { name: 'response_status', nullable: true })
  responseStatus: number | null;

  @Column('text', { name: 'response_body', nullable: true })
  responseBody: string | null;

  @Column('text', { nullable: true })
  error: string | null;

  @Column('timestamptz', { name: 'attempted_at', nullable: true })
  attemptedAt: Date | null;

  @Column('timestamptz', { name: 'next_attempt_at', nullable: true })
  nextAttemptAt: Date | null;

  /** The event's JSON as sent, while the attempt is pending. */
  @Column('text', { nullable: true, select: false })
  body: string | null;

  @Column('timestamptz', { name: 'locked_until', nullable: true, select: false })
  lockedUntil: Date | null;

  @Column('uuid', { nullable: true, select: false })
  lease: string | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'clock_timestamp()' })
  createdAt: Date;
}

/**
 * A segment of a webhook's feed leased to a process that is sending its events' first attempts: the events
 * after (`afterTxid`, `afterSeq`) up to (`lastTxid`, `lastSeq`). Deleted when its attempts are recorded;
 * one whose lease ran out is leased again (webhook-dispatcher.ts, migration WebhookSegments).
 */
@Entity('webhook_segments')
export class WebhookSegment extends TenantEntity {
  @Column('uuid', { name: 'webhook_id' })
  webhookId: string;

  @Column('bigint', { name: 'after_txid' })
  afterTxid: string;

  @Column('bigint', { name: 'after_seq' })
  afterSeq: string;

  @Column('bigint', { name: 'last_txid' })
  lastTxid: string;

  @Column('bigint', { name: 'last_seq' })
  lastSeq: string;

  @Column('uuid')
  lease: string;

  @Column('timestamptz', { name: 'leased_until' })
  leasedUntil: Date;
}
