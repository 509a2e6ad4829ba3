import { Column, Entity } from 'typeorm';
import { DocumentEntity } from '../../common/entity';

/** A reorder policy of an item at a facility. */
@Entity('reorder_policies')
export class ReorderPolicy extends DocumentEntity {
  @Column('uuid', { name: 'item_id' })
  itemId: string;

  @Column('uuid', { name: 'facility_id' })
  facilityId: string;

  @Column('numeric', { name: 'min_qty', precision: 20, scale: 6 })
  minQty: string;

  @Column('numeric', { name: 'max_qty', precision: 20, scale: 6 })
  maxQty: string;

  @Column('numeric', { name: 'safety_stock', precision: 20, scale: 6, default: () => '0' })
  safetyStock: string;

  @Column('numeric', { name: 'reorder_qty', precision: 20, scale: 6, default: () => '0' })
  reorderQty: string;

  @Column('integer', { name: 'lead_time_days', default: () => '0' })
  leadTimeDays: number;

  @Column('boolean', { name: 'is_active', default: () => 'true' })
  isActive: boolean;
}
