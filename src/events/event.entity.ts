import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One event of the feed (CONTRACT §9), written in the transaction of the change it describes. `txid`
 * (the writing transaction's id) and `seq` give the feed's order and, with the tenant, the key; the
 * database sets them and the event's `id`.
 */
@Entity('events')
export class EventRecord {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @Column('uuid')
  id: string;

  @PrimaryColumn('bigint')
  txid: string;

  @PrimaryColumn('bigint')
  seq: string;

  @Column('text')
  type: string;

  @Column('text')
  action: string;

  @Column('text', { name: 'subject_type' })
  subjectType: string;

  @Column('uuid', { name: 'subject_id' })
  subjectId: string;

  @Column('jsonb')
  data: unknown;

  @Column('timestamptz', { name: 'occurred_at', default: () => 'now()' })
  occurredAt: Date;
}

/** Per tenant, the newest feed position the retention job deleted: an older cursor has missed events. */
@Entity('event_prunes')
export class EventPrune {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @Column('bigint')
  txid: string;

  @Column('bigint')
  seq: string;

  @Column('timestamptz', { name: 'pruned_at', default: () => 'now()' })
  prunedAt: Date;
}
