import { Column, Entity, JoinColumn, ManyToOne, OneToMany } from 'typeorm';
import { DocumentEntity, TenantEntity } from '../common/entity';

/** A sales order. */
@Entity('sales_orders')
export class SalesOrder extends DocumentEntity {
  @Column('text', { name: 'order_no' })
  orderNo: string;

  @Column('uuid', { name: 'customer_id' })
  customerId: string;

  @Column('uuid', { name: 'facility_id' })
  facilityId: string;

  @Column('text')
  status: string;

  @Column('date', { name: 'requested_date', nullable: true })
  requestedDate: string | null;

  @Column('text', { nullable: true })
  notes: string | null;

  @Column('numeric', { name: 'total_amount', default: () => '0' })
  totalAmount: string;

  @OneToMany(() => SalesOrderLine, (l) => l.salesOrder)
  lines?: SalesOrderLine[];
}

/** A line of a sales order; quantities in its UOM and in base units. */
@Entity('sales_order_lines')
export class SalesOrderLine extends TenantEntity {
  @Column('uuid', { name: 'sales_order_id' })
  salesOrderId: string;

  @Column('integer', { name: 'line_no' })
  lineNo: number;

  @Column('uuid', { name: 'item_id' })
  itemId: string;

  @Column('uuid', { name: 'uom_id' })
  uomId: string;

  @Column('numeric', { precision: 20, scale: 6 })
  qty: string;

  @Column('numeric', { name: 'unit_price' })
  unitPrice: string;

  @Column('numeric', { name: 'qty_shipped', precision: 20, scale: 6, default: () => '0' })
  qtyShipped: string;

  @Column('numeric', { name: 'qty_base', precision: 20, scale: 6 })
  qtyBase: string;

  @Column('numeric', { name: 'qty_shipped_base', precision: 20, scale: 6, default: () => '0' })
  qtyShippedBase: string;

  @Column('uuid', { name: 'reservation_id', nullable: true })
  reservationId: string | null;

  @ManyToOne(() => SalesOrder, (h) => h.lines)
  @JoinColumn([{ name: 'tenant_id', referencedColumnName: 'tenantId' }, { name: 'sales_order_id', referencedColumnName: 'id' }])
  salesOrder?: SalesOrder;
}
