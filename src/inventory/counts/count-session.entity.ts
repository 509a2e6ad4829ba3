import { Column, Entity, JoinColumn, ManyToOne, OneToMany } from 'typeorm';
import { DocumentEntity, TenantEntity } from '../../common/entity';

/** A cycle count session at a facility. */
@Entity('count_sessions')
export class CountSession extends DocumentEntity {
  @Column('text', { name: 'session_no' })
  sessionNo: string;

  @Column('uuid', { name: 'facility_id' })
  facilityId: string;

  @Column('text')
  status: string;

  @Column('text', { nullable: true })
  notes: string | null;

  @Column('uuid', { name: 'transaction_id', nullable: true })
  transactionId: string | null;

  @Column('timestamptz', { name: 'completed_at', nullable: true })
  completedAt: Date | null;

  @OneToMany(() => CountLine, (l) => l.session)
  lines?: CountLine[];
}

/** A counted key of a count session. */
@Entity('count_lines')
export class CountLine extends TenantEntity {
  @Column('uuid', { name: 'session_id' })
  sessionId: string;

  @Column('uuid', { name: 'item_id' })
  itemId: string;

  @Column('uuid', { name: 'location_id' })
  locationId: string;

  @Column('text', { name: 'lot_no', nullable: true })
  lotNo: string | null;

  @Column('uuid', { name: 'lot_id', nullable: true })
  lotId: string | null;

  @Column('numeric', { name: 'counted_qty', precision: 20, scale: 6 })
  countedQty: string;

  @Column('numeric', { name: 'system_qty', precision: 20, scale: 6, nullable: true })
  systemQty: string | null;

  @Column('numeric', { name: 'variance_qty', precision: 20, scale: 6, nullable: true })
  varianceQty: string | null;

  @Column('text', { name: 'counted_by' })
  countedBy: string;

  @Column('timestamptz', { name: 'counted_at', default: () => 'now()' })
  countedAt: Date;

  @ManyToOne(() => CountSession, (h) => h.lines)
  @JoinColumn([{ name: 'tenant_id', referencedColumnName: 'tenantId' }, { name: 'session_id', referencedColumnName: 'id' }])
  session?: CountSession;
}
