import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { page, PageQuery } from '../../common/pagination';
import { SqlFilters } from '../../database/filters.sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { CreateStatusDto } from './dto/create-status.dto';

interface StatusRow {
  id: string;
  code: string;
  name: string;
  is_available: boolean;
}

const view = (r: StatusRow) => ({
  id: r.id, code: r.code, name: r.name, isAvailable: r.is_available,
});

/** Stock statuses; `isAvailable` is fixed at creation because positions count stock by it. */
@Injectable()
export class StatusesService {
  constructor(private readonly uow: UnitOfWork) {}

  /** Ordered by code; q searches code and name. */
  async list(query: PageQuery) {
    const f = new SqlFilters(this.uow.tenantId).search(['code', 'name'], query.q);
    const { rows, count } = await f.pageOf<StatusRow>(
      this.uow.manager,
      `SELECT id, code, name, is_available FROM stock_statuses WHERE ${f.where}`,
      'code, id',
      query,
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
