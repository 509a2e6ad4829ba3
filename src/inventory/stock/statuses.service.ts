import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { page, PageQuery } from '../../common/pagination';
import { SqlFilters } from '../../common/sql-filters';
import { UnitOfWork } from '../../database/unit-of-work';
import { CreateStatusDto } from './dto/create-status.dto';

const view = (r: { id: string; code: string; name: string; is_available: boolean }) => ({
  id: r.id, code: r.code, name: r.name, isAvailable: r.is_available,
});

/** Stock statuses; `isAvailable` is fixed at creation because positions count stock by it. */
@Injectable()
export class StatusesService {
  constructor(private readonly uow: UnitOfWork) {}

  /** Ordered by code; q searches code and name. */
  async list(query: PageQuery) {
    const m = this.uow.manager;
    const f = new SqlFilters(this.uow.tenantId).search(['code', 'name'], query.q);
    const [{ count }] = await m.query(`SELECT count(*)::int AS count FROM stock_statuses WHERE ${f.where}`, f.params);
    const rows = await m.query(
      `SELECT id, code, name, is_available FROM stock_statuses WHERE ${f.where} ORDER BY code ${f.page(query)}`,
      f.params,
    );
    return page(rows.map(view), count, query);
  }

  async create(dto: CreateStatusDto) {
    const [row] = await this.uow.manager.query(
      `INSERT INTO stock_statuses (tenant_id, id, code, name, is_available) VALUES ($1, $2, $3, $4, $5)
       RETURNING id, code, name, is_available`,
      [this.uow.tenantId, randomUUID(), dto.code.toUpperCase(), dto.name, dto.isAvailable],
    );
    return view(row);
  }
}
