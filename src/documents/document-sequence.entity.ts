import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A tenant's counter of one document number prefix (PO, SO, TX, …) or BOM version (`BOM:<item id>`). */
@Entity('document_sequences')
export class DocumentSequence {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('text')
  prefix: string;

  @Column('bigint', { name: 'last_value' })
  lastValue: string;
}
