import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { page, PageQuery } from '../../common/pagination';
import { SqlFilters } from '../../database/filters.sql';
import { UnitOfWork } from '../../database/unit-of-work';
import { CreateUomDto } from './dto/create-uom.dto';
import { Uom, uomView } from './uom.entity';

@Injectable()
export class UomsService {
  constructor(private readonly uow: UnitOfWork) {}

  /** Ordered by code (a small, stable reference list); q searches code and name. */
  async list(query: PageQuery) {
    const f = new SqlFilters(this.uow.tenantId).search(['code', 'name'], query.q);
    const { rows, count } = await f.pageOf<Uom>(this.uow.manager, `SELECT id, code, name, decimals FROM uoms WHERE ${f.where}`, 'code, id', query);
    return page(rows.map(uomView), count, query);
  }

  async create(dto: CreateUomDto) {
    const [row]: Uom[] = await this.uow.manager.query(
      `INSERT INTO uoms (tenant_id, id, code, name, decimals) VALUES ($1, $2, $3, $4, $5) RETURNING id, code, name, decimals`,
      [this.uow.tenantId, randomUUID(), dto.code.toUpperCase(), dto.name, dto.decimals],
    );
    return uomView(row);
  }
}
