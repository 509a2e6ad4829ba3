import { Column, Entity, JoinColumn, ManyToOne, OneToMany } from 'typeorm';
import { DocumentEntity, TenantEntity } from '../common/entity';

/** A work order. */
@Entity('work_orders')
export class WorkOrder extends DocumentEntity {
  @Column('text', { name: 'wo_no' })
  woNo: string;

  @Column('uuid', { name: 'item_id' })
  itemId: string;

  @Column('uuid', { name: 'bom_id' })
  bomId: string;

  @Column('uuid', { name: 'facility_id' })
  facilityId: string;

  @Column('numeric', { name: 'qty_planned', precision: 20, scale: 6 })
  qtyPlanned: string;

  @Column('numeric', { name: 'qty_completed', precision: 20, scale: 6, default: () => '0' })
  qtyCompleted: string;

  @Column('text')
  status: string;

  @Column('uuid', { name: 'output_location_id', nullable: true })
  outputLocationId: string | null;

  @Column('date', { name: 'due_date', nullable: true })
  dueDate: string | null;

  @Column('uuid', { name: 'transaction_id', nullable: true })
  transactionId: string | null;

  @Column('timestamptz', { name: 'released_at', nullable: true })
  releasedAt: Date | null;

  @Column('timestamptz', { name: 'completed_at', nullable: true })
  completedAt: Date | null;

  @OneToMany(() => WorkOrderComponent, (l) => l.workOrder)
  components?: WorkOrderComponent[];
}

/** A component requirement of a work order, with its reservation. */
@Entity('work_order_components')
export class WorkOrderComponent extends TenantEntity {
  @Column('uuid', { name: 'work_order_id' })
  workOrderId: string;

  @Column('integer', { name: 'line_no' })
  lineNo: number;

  @Column('uuid', { name: 'item_id' })
  itemId: string;

  @Column('numeric', { name: 'qty_required', precision: 20, scale: 6 })
  qtyRequired: string;

  @Column('numeric', { name: 'qty_issued', precision: 20, scale: 6, default: () => '0' })
  qtyIssued: string;

  @Column('uuid', { name: 'reservation_id', nullable: true })
  reservationId: string | null;

  @ManyToOne(() => WorkOrder, (h) => h.components)
  @JoinColumn([{ name: 'tenant_id', referencedColumnName: 'tenantId' }, { name: 'work_order_id', referencedColumnName: 'id' }])
  workOrder?: WorkOrder;
}
