import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { invalidState, notFound, unknownReference, withDuplicateMessages } from '../common/errors';
import { likePattern, page } from '../common/pagination';
import { UnitOfWork } from '../database/unit-of-work';
import { documentAudit } from '../common/entity';
import { Customer } from './customer.entity';
import { CreateCustomerDto, CustomerQuery, UpdateCustomerDto } from './sales.dto';
import { cursorOf, newestFirst } from '../common/cursor';
import { keysetPageOf } from '../database/keyset-page';

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const CUSTOMERS = newestFirst('customers', 'c');

export const customerView = (c: Customer) => ({
  id: c.id,
  code: c.code,
  name: c.name,
  email: c.email,
  phone: c.phone,
  address: c.address,
  isActive: c.isActive,
  ...documentAudit(c),
});
export type CustomerView = ReturnType<typeof customerView>;

const duplicateCode = (code: string) => ({ customers_code_key: `A customer with code "${code}" already exists` });

/** Customer master data: code unique per tenant; inactive customers take no new orders. Read and written through the tenant repository. */
@Injectable()
export class CustomersService {
  constructor(private readonly uow: UnitOfWork) {}

  private get repo() {
    return this.uow.repository(Customer);
  }

  /** Newest first (createdAt, then id); q searches code and name through customer_search (index-backed under RLS). */
  async list(query: CustomerQuery) {
    const at = cursorOf(CUSTOMERS, query);
    const qb = this.repo.createQueryBuilder('c');
    if (query.isActive !== undefined) qb.where('c.isActive = :isActive', { isActive: query.isActive });
    if (query.q) qb.where('c.id IN (SELECT id FROM customer_search(:q))', { q: likePattern(query.q) });
    const { rows, count, nextCursor } = await keysetPageOf(qb, CUSTOMERS, query, at);
    return page(rows.map(customerView), count, query, nextCursor);
  }

  async get(id: string): Promise<CustomerView> {
    return customerView(await this.find(id));
  }

  private async find(id: string): Promise<Customer> {
    const row = await this.repo.findOne({ id });
    if (!row) throw notFound('Customer');
    return row;
  }

  /**
   * A customer referenced by an order (404 naming the field), share-locked so it cannot be deactivated
   * under the order; inactive ones take no new orders (409).
   */
  async reference(id: string, field: string): Promise<Customer> {
    const row = await this.repo.findOne({ id }, { lock: 'share' });
    if (!row) throw unknownReference(field);
    if (!row.isActive) throw invalidState(`Customer ${row.code} is inactive`);
    return row;
  }

  async create(dto: CreateCustomerDto): Promise<CustomerView> {
    const id = randomUUID();
    await withDuplicateMessages(duplicateCode(dto.code), () =>
      this.repo.insert({
        id, code: dto.code, name: dto.name, email: dto.email ?? null, phone: dto.phone ?? null, address: dto.address ?? null,
        isActive: dto.isActive ?? true, createdBy: this.uow.userId, updatedBy: this.uow.userId,
      }),
    );
    return this.get(id);
  }

  /** The given fields (a nullable one's null clears it); version + 1. */
  async update(id: string, dto: UpdateCustomerDto, ifMatch?: number): Promise<CustomerView> {
    const c = await this.repo.lockVersion(id, ifMatch, 'Customer');
    const fields = Object.fromEntries(Object.entries(dto).filter(([, v]) => v !== undefined)) as Partial<Customer>;
    if (!Object.keys(fields).length) return customerView(c);
    await withDuplicateMessages(duplicateCode(dto.code ?? c.code), () => this.repo.touch(id, fields));
    return this.get(id);
  }
}
