import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { likePattern, page, PageQuery } from '../../common/pagination';
import { UnitOfWork } from '../../database/unit-of-work';
import { CreateUomDto } from './dto/create-uom.dto';
import { Uom, uomView } from './uom.entity';

@Injectable()
export class UomsService {
  constructor(private readonly uow: UnitOfWork) {}

  /** Ordered by code (a small, stable reference list); q searches code and name. */
  async list(query: PageQuery) {
    const qb = this.uow.repository(Uom).createQueryBuilder('u').orderBy('u.code', 'ASC').addOrderBy('u.id', 'ASC');
    if (query.q) qb.andWhere('(u.code ILIKE :q OR u.name ILIKE :q)', { q: likePattern(query.q) });
    const [rows, count] = await qb.take(query.limit).skip(query.offset).getManyAndCount();
    return page(rows.map(uomView), count, query);
  }

  async create(dto: CreateUomDto) {
    const uom = { id: randomUUID(), code: dto.code.toUpperCase(), name: dto.name, decimals: dto.decimals };
    await this.uow.repository(Uom).insert(uom);
    return uomView(uom as Uom);
  }
}
