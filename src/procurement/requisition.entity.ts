import { Column, Entity, JoinColumn, ManyToOne, OneToMany } from 'typeorm';
import { DocumentEntity, TenantEntity } from '../common/entity';

/** A purchase requisition. */
@Entity('requisitions')
export class Requisition extends DocumentEntity {
  @Column('text', { name: 'req_no' })
  reqNo: string;

  @Column('uuid', { name: 'facility_id' })
  facilityId: string;

  @Column('text')
  status: string;

  @Column('date', { name: 'needed_by', nullable: true })
  neededBy: string | null;

  @Column('text', { nullable: true })
  notes: string | null;

  @Column('uuid', { name: 'purchase_order_ids', array: true, default: () => `'{}'::uuid[]` })
  purchaseOrderIds: string[];

  @OneToMany(() => RequisitionLine, (l) => l.requisition)
  lines?: RequisitionLine[];
}

/** A line of a requisition. */
@Entity('requisition_lines')
export class RequisitionLine extends TenantEntity {
  @Column('uuid', { name: 'requisition_id' })
  requisitionId: string;

  @Column('integer', { name: 'line_no' })
  lineNo: number;

  @Column('uuid', { name: 'item_id' })
  itemId: string;

  @Column('uuid', { name: 'uom_id' })
  uomId: string;

  @Column('numeric', { precision: 20, scale: 6 })
  qty: string;

  @Column('uuid', { name: 'supplier_id', nullable: true })
  supplierId: string | null;

  @ManyToOne(() => Requisition, (h) => h.lines)
  @JoinColumn([{ name: 'tenant_id', referencedColumnName: 'tenantId' }, { name: 'requisition_id', referencedColumnName: 'id' }])
  requisition?: Requisition;
}
