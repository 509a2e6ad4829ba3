import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { cursorOf, Keyset } from '../../common/cursor';
import { likePattern, page, PageQuery } from '../../common/pagination';
import { keysetPageOf } from '../../database/keyset-page';
import { UnitOfWork } from '../../database/unit-of-work';
import { CreateUomDto } from './dto/create-uom.dto';
import { Uom, uomView } from './uom.entity';

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const UOMS = new Keyset('uoms', [{ expr: 'u.code', type: 'text' }, { expr: 'u.id', type: 'uuid' }]);

@Injectable()
export class UomsService {
  constructor(private readonly uow: UnitOfWork) {}

  /** Ordered by code (a small, stable reference list); q searches code and name. */
  async list(query: PageQuery) {
    const at = cursorOf(UOMS, query);
    const qb = this.uow.repository(Uom).createQueryBuilder('u');
    if (query.q) qb.andWhere('(u.code ILIKE :q OR u.name ILIKE :q)', { q: likePattern(query.q) });
    const { rows, count, nextCursor } = await keysetPageOf(qb, UOMS, query, at);
    return page(rows.map(uomView), count, query, nextCursor);
  }

  async create(dto: CreateUomDto) {
    const uom = { id: randomUUID(), code: dto.code.toUpperCase(), name: dto.name, decimals: dto.decimals };
    await this.uow.repository(Uom).insert(uom);
    return uomView(uom as Uom);
  }
}
