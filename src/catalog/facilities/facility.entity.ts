import { Column, Entity } from 'typeorm';
import { documentAudit, DocumentEntity } from '../../common/entity';

export const FACILITY_TYPES = ['warehouse', 'store', 'plant'] as const;
export type FacilityType = (typeof FACILITY_TYPES)[number];

@Entity('facilities')
export class Facility extends DocumentEntity {
  @Column('text')
  code: string;

  @Column('text')
  name: string;

  @Column('text')
  type: FacilityType;

  @Column('text', { nullable: true })
  address: string | null;

  @Column('boolean', { name: 'is_active' })
  isActive: boolean;
}

export const facilityView = (f: Facility) => ({
  id: f.id,
  code: f.code,
  name: f.name,
  type: f.type,
  address: f.address,
  isActive: f.isActive,
  ...documentAudit(f),
});
export type FacilityView = ReturnType<typeof facilityView>;
