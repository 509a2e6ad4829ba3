import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A tenant, provisioned on its first request (default statuses and units of measure). */
@Entity('tenants')
export class Tenant {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @Column('timestamptz', { name: 'created_at', default: () => 'now()' })
  createdAt: Date;
}
