import { Column, Entity, JoinColumn, ManyToOne, OneToMany } from 'typeorm';
import { DocumentEntity, TenantEntity } from '../common/entity';

/** A purchase order. */
@Entity('purchase_orders')
export class PurchaseOrder extends DocumentEntity {
  @Column('text', { name: 'po_no' })
  poNo: string;

  @Column('uuid', { name: 'supplier_id' })
  supplierId: string;

  @Column('uuid', { name: 'facility_id' })
  facilityId: string;

  @Column('text')
  status: string;

  @Column('char', { length: 3 })
  currency: string;

  @Column('date', { name: 'order_date' })
  orderDate: string;

  @Column('date', { name: 'expected_date', nullable: true })
  expectedDate: string | null;

  @Column('text', { nullable: true })
  notes: string | null;

  @Column('numeric', { name: 'total_amount', default: () => '0' })
  totalAmount: string;

  @Column('uuid', { name: 'requisition_id', nullable: true })
  requisitionId: string | null;

  @OneToMany(() => PurchaseOrderLine, (l) => l.purchaseOrder)
  lines?: PurchaseOrderLine[];
}

/** A line of a purchase order; quantities in its UOM and in base units. */
@Entity('purchase_order_lines')
export class PurchaseOrderLine extends TenantEntity {
  @Column('uuid', { name: 'purchase_order_id' })
  purchaseOrderId: string;

  @Column('integer', { name: 'line_no' })
  lineNo: number;

  @Column('uuid', { name: 'item_id' })
  itemId: string;

  @Column('uuid', { name: 'uom_id' })
  uomId: string;

  @Column('numeric', { name: 'qty_ordered', precision: 20, scale: 6 })
  qtyOrdered: string;

  @Column('numeric', { name: 'unit_price' })
  unitPrice: string;

  @Column('numeric', { name: 'qty_received', precision: 20, scale: 6, default: () => '0' })
  qtyReceived: string;

  @Column('numeric', { name: 'qty_ordered_base', precision: 20, scale: 6 })
  qtyOrderedBase: string;

  @Column('numeric', { name: 'qty_received_base', precision: 20, scale: 6, default: () => '0' })
  qtyReceivedBase: string;

  @ManyToOne(() => PurchaseOrder, (h) => h.lines)
  @JoinColumn([{ name: 'tenant_id', referencedColumnName: 'tenantId' }, { name: 'purchase_order_id', referencedColumnName: 'id' }])
  purchaseOrder?: PurchaseOrder;
}
