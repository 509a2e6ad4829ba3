import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An Idempotency-Key taken by a request, with the stored response once it finished. */
@Entity('idempotency_keys')
export class IdempotencyKey {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('text')
  key: string;

  @Column('text', { name: 'request_hash' })
  requestHash: string;

  @Column('integer', { name: 'status_code', nullable: true })
  statusCode: number | null;

  @Column('json', { nullable: true })
  response: unknown | null;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt: Date;
}
