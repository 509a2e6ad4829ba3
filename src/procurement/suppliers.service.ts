import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { assertVersion, invalidState, notFound, unknownReference, withDuplicateMessages } from '../common/errors';
import { likePattern, page } from '../common/pagination';
import { SqlFilters } from '../common/sql-filters';
import { UnitOfWork } from '../database/unit-of-work';
import { auditView } from '../documents/document-store';
import { CreateSupplierDto, DEFAULT_CURRENCY, SupplierQuery, UpdateSupplierDto } from './procurement.dto';

export interface SupplierRow {
  id: string;
  code: string;
  name: string;
  email: string | null;
  phone: string | null;
  address: string | null;
  currency: string;
  is_active: boolean;
  version: number;
  created_by: string;
  updated_by: string;
  created_at: Date;
  updated_at: Date;
}

export const supplierView = (s: SupplierRow) => ({
  id: s.id,
  code: s.code,
  name: s.name,
  email: s.email,
  phone: s.phone,
  address: s.address,
  currency: s.currency,
  isActive: s.is_active,
  ...auditView(s),
});
export type SupplierView = ReturnType<typeof supplierView>;

const COLUMNS = 'id, code, name, email, phone, address, currency, is_active, version, created_by, updated_by, created_at, updated_at';
const duplicateCode = (code: string) => ({ suppliers_code_key: `A supplier with code "${code}" already exists` });

/** Supplier master data: code unique per tenant; inactive suppliers take no new orders. */
@Injectable()
export class SuppliersService {
  constructor(private readonly uow: UnitOfWork) {}

  private get m() {
    return this.uow.manager;
  }

  /** Newest first (createdAt, then id); q searches code and name through supplier_search (index-backed under RLS). */
  async list(query: SupplierQuery) {
    const f = new SqlFilters(this.uow.tenantId)
      .add('is_active = ?', query.isActive)
      .add('id IN (SELECT id FROM supplier_search(?))', query.q && likePattern(query.q));
    const { rows, count } = await f.pageOf<SupplierRow>(this.m, `SELECT ${COLUMNS} FROM suppliers WHERE ${f.where}`, 'created_at DESC, id DESC', query);
    return page(rows.map(supplierView), count, query);
  }

  async get(id: string): Promise<SupplierView> {
    return supplierView(await this.find(id));
  }

  async find(id: string, forUpdate = false): Promise<SupplierRow> {
    const [row]: SupplierRow[] = await this.m.query(
      `SELECT ${COLUMNS} FROM suppliers WHERE tenant_id = $1 AND id = $2${forUpdate ? ' FOR UPDATE' : ''}`,
      [this.uow.tenantId, id],
    );
    if (!row) throw notFound('Supplier');
    return row;
  }

  /**
   * A supplier referenced by a document body (404 naming the field), share-locked so it cannot be
   * deactivated under the document; inactive ones are refused for new orders (409).
   */
  async reference(id: string, field: string): Promise<SupplierRow> {
    const [row]: SupplierRow[] = await this.m.query(`SELECT ${COLUMNS} FROM suppliers WHERE tenant_id = $1 AND id = $2 FOR SHARE`, [this.uow.tenantId, id]);
    if (!row) throw unknownReference(field);
    if (!row.is_active) throw invalidState(`Supplier ${row.code} is inactive`);
    return row;
  }

  async create(dto: CreateSupplierDto): Promise<SupplierView> {
    const id = randomUUID();
    await withDuplicateMessages(duplicateCode(dto.code), () =>
      this.m.query(
        `INSERT INTO suppliers (tenant_id, id, code, name, email, phone, address, currency, is_active, created_by, updated_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
        [this.uow.tenantId, id, dto.code, dto.name, dto.email ?? null, dto.phone ?? null, dto.address ?? null, dto.currency ?? DEFAULT_CURRENCY, dto.isActive ?? true, this.uow.userId],
      ),
    );
    return this.get(id);
  }

  async update(id: string, dto: UpdateSupplierDto, ifMatch?: number): Promise<SupplierView> {
    const s = await this.find(id, true);
    assertVersion(s.version, ifMatch);
    if (Object.values(dto).every((v) => v === undefined)) return supplierView(s);
    const pick = <T>(given: T | undefined, stored: T) => (given === undefined ? stored : given);
    await withDuplicateMessages(duplicateCode(dto.code ?? s.code), () =>
      this.m.query(
        `UPDATE suppliers SET code = $3, name = $4, email = $5, phone = $6, address = $7, currency = $8, is_active = $9,
                version = version + 1, updated_by = $10, updated_at = now()
          WHERE tenant_id = $1 AND id = $2`,
        [
          this.uow.tenantId, id, pick(dto.code, s.code), pick(dto.name, s.name), pick(dto.email, s.email), pick(dto.phone, s.phone),
          pick(dto.address, s.address), pick(dto.currency, s.currency), pick(dto.isActive, s.is_active), this.uow.userId,
        ],
      ),
    );
    return this.get(id);
  }
}
