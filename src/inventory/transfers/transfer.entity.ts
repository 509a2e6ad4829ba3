import { Column, Entity, JoinColumn, ManyToOne, OneToMany } from 'typeorm';
import { DocumentEntity, TenantEntity } from '../../common/entity';

/** A transfer of stock between two facilities. */
@Entity('transfer_orders')
export class TransferOrder extends DocumentEntity {
  @Column('text', { name: 'transfer_no' })
  transferNo: string;

  @Column('uuid', { name: 'from_facility_id' })
  fromFacilityId: string;

  @Column('uuid', { name: 'to_facility_id' })
  toFacilityId: string;

  @Column('text')
  status: string;

  @Column('text', { nullable: true })
  notes: string | null;

  @Column('timestamptz', { name: 'shipped_at', nullable: true })
  shippedAt: Date | null;

  @Column('timestamptz', { name: 'received_at', nullable: true })
  receivedAt: Date | null;

  @OneToMany(() => TransferOrderLine, (l) => l.transferOrder)
  lines?: TransferOrderLine[];
}

/** A line of a transfer order. */
@Entity('transfer_order_lines')
export class TransferOrderLine extends TenantEntity {
  @Column('uuid', { name: 'transfer_order_id' })
  transferOrderId: string;

  @Column('integer', { name: 'line_no' })
  lineNo: number;

  @Column('uuid', { name: 'item_id' })
  itemId: string;

  @Column('numeric', { precision: 20, scale: 6 })
  qty: string;

  @Column('uuid', { name: 'from_location_id' })
  fromLocationId: string;

  @Column('uuid', { name: 'to_location_id' })
  toLocationId: string;

  @Column('uuid', { name: 'lot_id', nullable: true })
  lotId: string | null;

  @Column('text', { name: 'serial_nos', array: true, nullable: true })
  serialNos: string[] | null;

  @Column('numeric', { name: 'qty_shipped', precision: 20, scale: 6, default: () => '0' })
  qtyShipped: string;

  @Column('numeric', { name: 'qty_received', precision: 20, scale: 6, default: () => '0' })
  qtyReceived: string;

  @ManyToOne(() => TransferOrder, (h) => h.lines)
  @JoinColumn([{ name: 'tenant_id', referencedColumnName: 'tenantId' }, { name: 'transfer_order_id', referencedColumnName: 'id' }])
  transferOrder?: TransferOrder;
}
