import { Column, Entity } from 'typeorm';
import { TenantEntity } from '../../common/entity';

/** A stock status (AVAILABLE, QUARANTINE, DAMAGED, …); only isAvailable ones count as available. */
@Entity('stock_statuses')
export class StockStatus extends TenantEntity {
  @Column('text')
  code: string;

  @Column('text')
  name: string;

  @Column('boolean', { name: 'is_available' })
  isAvailable: boolean;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt: Date;
}
