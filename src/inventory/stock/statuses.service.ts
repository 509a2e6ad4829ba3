import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { cursorOf, Keyset } from '../../common/cursor';
import { likePattern, page, PageQuery } from '../../common/pagination';
import { keysetPageOf } from '../../database/keyset-page';
import { UnitOfWork } from '../../database/unit-of-work';
import { CreateStatusDto } from './dto/create-status.dto';
import { StockStatus } from './stock-status.entity';

const view = (s: Pick<StockStatus, 'id' | 'code' | 'name' | 'isAvailable'>) => ({
  id: s.id, code: s.code, name: s.name, isAvailable: s.isAvailable,
});

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const STATUSES = new Keyset('statuses', [{ expr: 's.code', type: 'text' }, { expr: 's.id', type: 'uuid' }]);

/** Stock statuses; `isAvailable` is fixed at creation because positions count stock by it. */
@Injectable()
export class StatusesService {
  constructor(private readonly uow: UnitOfWork) {}

  /** Ordered by code; q searches code and name. */
  async list(query: PageQuery) {
    const at = cursorOf(STATUSES, query);
    const qb = this.uow.repository(StockStatus).createQueryBuilder('s');
    if (query.q) qb.andWhere('(s.code ILIKE :pattern OR s.name ILIKE :pattern)', { pattern: likePattern(query.q) });
    const { rows, count, nextCursor } = await keysetPageOf(qb, STATUSES, query, at);
    return page(rows.map(view), count, query, nextCursor);
  }

  async create(dto: CreateStatusDto) {
    const status = { id: randomUUID(), code: dto.code.toUpperCase(), name: dto.name, isAvailable: dto.isAvailable };
    await this.uow.repository(StockStatus).insert(status);
    return view(status);
  }
}
