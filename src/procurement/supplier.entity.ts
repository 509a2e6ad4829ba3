import { Column, Entity } from 'typeorm';
import { DocumentEntity } from '../common/entity';

/** A supplier. */
@Entity('suppliers')
export class Supplier extends DocumentEntity {
  @Column('text')
  code: string;

  @Column('text')
  name: string;

  @Column('text', { nullable: true })
  email: string | null;

  @Column('text', { nullable: true })
  phone: string | null;

  @Column('text', { nullable: true })
  address: string | null;

  @Column('char', { length: 3 })
  currency: string;

  @Column('boolean', { name: 'is_active', default: () => 'true' })
  isActive: boolean;
}
