import { Column, Entity, JoinColumn, ManyToOne, OneToMany } from 'typeorm';
import { DocumentEntity, TenantEntity } from '../common/entity';

/** A version of a bill of materials. */
@Entity('boms')
export class Bom extends DocumentEntity {
  @Column('uuid', { name: 'item_id' })
  itemId: string;

  @Column('integer', { name: 'version_no' })
  versionNo: number;

  @Column('text')
  status: string;

  @Column('numeric', { name: 'output_qty', precision: 20, scale: 6 })
  outputQty: string;

  @Column('text', { nullable: true })
  notes: string | null;

  @Column('timestamptz', { name: 'activated_at', nullable: true })
  activatedAt: Date | null;

  @OneToMany(() => BomComponent, (l) => l.bom)
  components?: BomComponent[];
}

/** A component of a BOM version. */
@Entity('bom_components')
export class BomComponent extends TenantEntity {
  @Column('uuid', { name: 'bom_id' })
  bomId: string;

  @Column('integer', { name: 'line_no' })
  lineNo: number;

  @Column('uuid', { name: 'item_id' })
  itemId: string;

  @Column('numeric', { name: 'qty_per', precision: 20, scale: 6 })
  qtyPer: string;

  @Column('uuid', { name: 'uom_id' })
  uomId: string;

  @Column('numeric', { name: 'scrap_factor', precision: 9, scale: 6, default: () => '0' })
  scrapFactor: string;

  @ManyToOne(() => Bom, (h) => h.components)
  @JoinColumn([{ name: 'tenant_id', referencedColumnName: 'tenantId' }, { name: 'bom_id', referencedColumnName: 'id' }])
  bom?: Bom;
}
