import { Column, CreateDateColumn, PrimaryColumn, UpdateDateColumn, VersionColumn } from 'typeorm';

/**
 * Every tenant table's key is (tenant_id, id). Entities carry both; the composite keys, foreign keys,
 * and row-level security live in the migrations.
 */
export abstract class TenantEntity {
  @PrimaryColumn('uuid', { name: 'tenant_id' })
  tenantId: string;

  @PrimaryColumn('uuid')
  id: string;
}

/** A mutable document: version counter and who/when of creation and last change. */
export abstract class DocumentEntity extends TenantEntity {
  @VersionColumn()
  version: number;

  @Column('text', { name: 'created_by' })
  createdBy: string;

  @Column('text', { name: 'updated_by' })
  updatedBy: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

/** The audit fields of a document's response (CONTRACT §1): version, who created and last changed it, when. */
export const documentAudit = (d: DocumentEntity) => ({
  version: d.version,
  createdBy: d.createdBy,
  updatedBy: d.updatedBy,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});
export type DocumentAudit = ReturnType<typeof documentAudit>;
