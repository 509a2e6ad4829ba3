import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { assertVersion, invalidState, notFound, unknownReference, withDuplicateMessages } from '../common/errors';
import { likePattern, page } from '../common/pagination';
import { SqlFilters } from '../common/sql-filters';
import { UnitOfWork } from '../database/unit-of-work';
import { auditView } from '../documents/document-store';
import { CreateCustomerDto, CustomerQuery, UpdateCustomerDto } from './sales.dto';

export interface CustomerRow {
  id: string;
  code: string;
  name: string;
  email: string | null;
  phone: string | null;
  address: string | null;
  is_active: boolean;
  version: number;
  created_by: string;
  updated_by: string;
  created_at: Date;
  updated_at: Date;
}

export const customerView = (c: CustomerRow) => ({
  id: c.id,
  code: c.code,
  name: c.name,
  email: c.email,
  phone: c.phone,
  address: c.address,
  isActive: c.is_active,
  ...auditView(c),
});
export type CustomerView = ReturnType<typeof customerView>;

const COLUMNS = 'id, code, name, email, phone, address, is_active, version, created_by, updated_by, created_at, updated_at';
const duplicateCode = (code: string) => ({ customers_code_key: `A customer with code "${code}" already exists` });

/** Customer master data: code unique per tenant; inactive customers take no new orders. */
@Injectable()
export class CustomersService {
  constructor(private readonly uow: UnitOfWork) {}

  private get m() {
    return this.uow.manager;
  }

  /** Newest first (createdAt, then id); q searches code and name through customer_search (index-backed under RLS). */
  async list(query: CustomerQuery) {
    const f = new SqlFilters(this.uow.tenantId)
      .add('is_active = ?', query.isActive)
      .add('id IN (SELECT id FROM customer_search(?))', query.q && likePattern(query.q));
    const { rows, count } = await f.pageOf<CustomerRow>(this.m, `SELECT ${COLUMNS} FROM customers WHERE ${f.where}`, 'created_at DESC, id DESC', query);
    return page(rows.map(customerView), count, query);
  }

  async get(id: string): Promise<CustomerView> {
    return customerView(await this.find(id));
  }

  private async find(id: string, lock = ''): Promise<CustomerRow> {
    const [row]: CustomerRow[] = await this.m.query(`SELECT ${COLUMNS} FROM customers WHERE tenant_id = $1 AND id = $2${lock}`, [this.uow.tenantId, id]);
    if (!row) throw notFound('Customer');
    return row;
  }

  /**
   * A customer referenced by an order (404 naming the field), share-locked so it cannot be deactivated
   * under the order; inactive ones take no new orders (409).
   */
  async reference(id: string, field: string): Promise<CustomerRow> {
    const [row]: CustomerRow[] = await this.m.query(`SELECT ${COLUMNS} FROM customers WHERE tenant_id = $1 AND id = $2 FOR SHARE`, [this.uow.tenantId, id]);
    if (!row) throw unknownReference(field);
    if (!row.is_active) throw invalidState(`Customer ${row.code} is inactive`);
    return row;
  }

  async create(dto: CreateCustomerDto): Promise<CustomerView> {
    const id = randomUUID();
    await withDuplicateMessages(duplicateCode(dto.code), () =>
      this.m.query(
        `INSERT INTO customers (tenant_id, id, code, name, email, phone, address, is_active, created_by, updated_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
        [this.uow.tenantId, id, dto.code, dto.name, dto.email ?? null, dto.phone ?? null, dto.address ?? null, dto.isActive ?? true, this.uow.userId],
      ),
    );
    return this.get(id);
  }

  async update(id: string, dto: UpdateCustomerDto, ifMatch?: number): Promise<CustomerView> {
    const c = await this.find(id, ' FOR UPDATE');
    assertVersion(c.version, ifMatch);
    if (Object.values(dto).every((v) => v === undefined)) return customerView(c);
    const pick = <T>(given: T | undefined, stored: T) => (given === undefined ? stored : given);
    await withDuplicateMessages(duplicateCode(dto.code ?? c.code), () =>
      this.m.query(
        `UPDATE customers SET code = $3, name = $4, email = $5, phone = $6, address = $7, is_active = $8,
                version = version + 1, updated_by = $9, updated_at = now()
          WHERE tenant_id = $1 AND id = $2`,
        [
          this.uow.tenantId, id, pick(dto.code, c.code), pick(dto.name, c.name), pick(dto.email, c.email), pick(dto.phone, c.phone),
          pick(dto.address, c.address), pick(dto.isActive, c.is_active), this.uow.userId,
        ],
      ),
    );
    return this.get(id);
  }
}
