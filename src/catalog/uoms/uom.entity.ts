import { Column, CreateDateColumn, Entity, UpdateDateColumn } from 'typeorm';
import { TenantEntity } from '../../common/entity';

@Entity('uoms')
export class Uom extends TenantEntity {
  @Column('text')
  code: string;

  @Column('text')
  name: string;

  @Column('smallint')
  decimals: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

export const uomView = (u: Uom) => ({ id: u.id, code: u.code, name: u.name, decimals: u.decimals });
