import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { assertVersion, invalidState, notFound, unknownReference, withDuplicateMessages } from '../common/errors';
import { likePattern, page } from '../common/pagination';
import { UnitOfWork } from '../database/unit-of-work';
import { documentAudit } from '../common/entity';
import { Supplier } from './supplier.entity';
import { CreateSupplierDto, DEFAULT_CURRENCY, SupplierQuery, UpdateSupplierDto } from './procurement.dto';
import { cursorOf, newestFirst } from '../common/cursor';
import { keysetPageOf } from '../database/keyset-page';

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const SUPPLIERS = newestFirst('suppliers', 's');

export const supplierView = (s: Supplier) => ({
  id: s.id,
  code: s.code,
  name: s.name,
  email: s.email,
  phone: s.phone,
  address: s.address,
  currency: s.currency,
  isActive: s.isActive,
  ...documentAudit(s),
});
export type SupplierView = ReturnType<typeof supplierView>;

const duplicateCode = (code: string) => ({ suppliers_code_key: `A supplier with code "${code}" already exists` });

/** Supplier master data: code unique per tenant; inactive suppliers take no new orders. Read and written through the tenant repository. */
@Injectable()
export class SuppliersService {
  constructor(private readonly uow: UnitOfWork) {}

  private get repo() {
    return this.uow.repository(Supplier);
  }

  /** Newest first (createdAt, then id); q searches code and name through supplier_search (index-backed under RLS). */
  async list(query: SupplierQuery) {
    const at = cursorOf(SUPPLIERS, query);
    const qb = this.repo.createQueryBuilder('s');
    if (query.isActive !== undefined) qb.where('s.isActive = :isActive', { isActive: query.isActive });
    if (query.q) qb.where('s.id IN (SELECT id FROM supplier_search(:q))', { q: likePattern(query.q) });
    const { rows, count, nextCursor } = await keysetPageOf(qb, SUPPLIERS, query, at);
    return page(rows.map(supplierView), count, query, nextCursor);
  }

  async get(id: string): Promise<SupplierView> {
    return supplierView(await this.find(id));
  }

  async find(id: string, forUpdate = false): Promise<Supplier> {
    const row = await this.repo.findOne({ id }, { lock: forUpdate ? 'update' : undefined });
    if (!row) throw notFound('Supplier');
    return row;
  }

  /**
   * A supplier referenced by a document body (404 naming the field), share-locked so it cannot be
   * deactivated under the document; inactive ones are refused for new orders (409).
   */
  async reference(id: string, field: string): Promise<Supplier> {
    const row = await this.repo.findOne({ id }, { lock: 'share' });
    if (!row) throw unknownReference(field);
    if (!row.isActive) throw invalidState(`Supplier ${row.code} is inactive`);
    return row;
  }

  async create(dto: CreateSupplierDto): Promise<SupplierView> {
    const id = randomUUID();
    await withDuplicateMessages(duplicateCode(dto.code), () =>
      this.repo.insert({
        id, code: dto.code, name: dto.name, email: dto.email ?? null, phone: dto.phone ?? null, address: dto.address ?? null,
        currency: dto.currency ?? DEFAULT_CURRENCY, isActive: dto.isActive ?? true, createdBy: this.uow.userId, updatedBy: this.uow.userId,
      }),
    );
    return this.get(id);
  }

  /** The given fields (a nullable one's null clears it); version + 1. */
  async update(id: string, dto: UpdateSupplierDto, ifMatch?: number): Promise<SupplierView> {
    const s = await this.find(id, true);
    assertVersion(s.version, ifMatch);
    const fields = Object.fromEntries(Object.entries(dto).filter(([, v]) => v !== undefined)) as Partial<Supplier>;
    if (!Object.keys(fields).length) return supplierView(s);
    await withDuplicateMessages(duplicateCode(dto.code ?? s.code), () => this.repo.update({ id }, { ...fields, updatedBy: this.uow.userId }));
    return this.get(id);
  }
}
