import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { likePattern, page, PageQuery } from '../../common/pagination';
import { UnitOfWork } from '../../database/unit-of-work';
import { CreateStatusDto } from './dto/create-status.dto';
import { StockStatus } from './stock-status.entity';

const view = (s: Pick<StockStatus, 'id' | 'code' | 'name' | 'isAvailable'>) => ({
  id: s.id, code: s.code, name: s.name, isAvailable: s.isAvailable,
});

/** Stock statuses; `isAvailable` is fixed at creation because positions count stock by it. */
@Injectable()
export class StatusesService {
  constructor(private readonly uow: UnitOfWork) {}

  /** Ordered by code; q searches code and name. */
  async list(query: PageQuery) {
    const qb = this.uow.repository(StockStatus).createQueryBuilder('s');
    if (query.q) qb.andWhere('(s.code ILIKE :pattern OR s.name ILIKE :pattern)', { pattern: likePattern(query.q) });
    const [rows, count] = await qb.orderBy('s.code').addOrderBy('s.id').offset(query.offset).limit(query.limit).getManyAndCount();
    return page(rows.map(view), count, query);
  }

  async create(dto: CreateStatusDto) {
    const status = { id: randomUUID(), code: dto.code.toUpperCase(), name: dto.name, isAvailable: dto.isAvailable };
    await this.uow.repository(StockStatus).insert(status);
    return view(status);
  }
}
