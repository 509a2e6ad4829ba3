import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../database/unit-of-work';

/**
 * Per-tenant sequential document numbers (`PO-000001`, …). The counter row is incremented
 * atomically inside the caller's transaction, so numbers are unique and gap-free per tenant.
 */
@Injectable()
export class DocumentNumbers {
  constructor(private readonly uow: UnitOfWork) {}

  async next(prefix: 'PO' | 'SO' | 'TO' | 'WO' | 'RQ' | 'GR' | 'CS' | 'TX' | 'RS'): Promise<string> {
    const [{ value }] = await this.uow.manager.query(
      `INSERT INTO document_sequences (tenant_id, prefix, last_value) VALUES ($1, $2, 1)
       ON CONFLICT (tenant_id, prefix) DO UPDATE SET last_value = document_sequences.last_value + 1
       RETURNING last_value AS value`,
      [this.uow.tenantId, prefix],
    );
    return `${prefix}-${String(value).padStart(6, '0')}`;
  }
}
