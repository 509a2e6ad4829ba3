import { Column, Entity, JoinColumn, ManyToOne, OneToMany, PrimaryColumn } from 'typeorm';
import { TenantEntity } from '../common/entity';

/** A goods receipt of a purchase order. */
@Entity('receipts')
export class Receipt extends TenantEntity {
  @Column('text', { name: 'receipt_no' })
  receiptNo: string;

  @Column('uuid', { name: 'purchase_order_id' })
  purchaseOrderId: string;

  @Column('timestamptz', { name: 'received_at', default: () => 'now()' })
  receivedAt: Date;

  @Column('uuid', { name: 'transaction_id', nullable: true })
  transactionId: string | null;

  @Column('text', { nullable: true })
  notes: string | null;

  @Column('text', { name: 'created_by' })
  createdBy: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt: Date;

  @OneToMany(() => ReceiptLine, (l) => l.receipt)
  lines?: ReceiptLine[];
}

/** A line of a goods receipt. */
@Entity('receipt_lines')
export class ReceiptLine {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid', { name: 'receipt_id' })
  receiptId: string;

  @PrimaryColumn('integer', { name: 'line_no' })
  lineNo: number;

  @Column('uuid', { name: 'po_line_id' })
  poLineId: string;

  @Column('uuid', { name: 'item_id' })
  itemId: string;

  @Column('numeric', { precision: 20, scale: 6 })
  qty: string;

  @Column('uuid', { name: 'location_id', nullable: true })
  locationId: string | null;

  @Column('text', { name: 'lot_no', nullable: true })
  lotNo: string | null;

  @Column('date', { name: 'expiry_date', nullable: true })
  expiryDate: string | null;

  @Column('text', { name: 'serial_nos', array: true, nullable: true })
  serialNos: string[] | null;

  @Column('uuid', { name: 'status_id', nullable: true })
  statusId: string | null;

  @ManyToOne(() => Receipt, (h) => h.lines)
  @JoinColumn([{ name: 'tenant_id', referencedColumnName: 'tenantId' }, { name: 'receipt_id', referencedColumnName: 'id' }])
  receipt?: Receipt;
}
