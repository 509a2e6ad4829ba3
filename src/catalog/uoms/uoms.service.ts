import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { likePattern, page, PageQuery } from '../../common/pagination';
import { UnitOfWork } from '../../database/unit-of-work';
import { CreateUomDto } from './dto/create-uom.dto';
import { Uom, uomView } from './uom.entity';

@Injectable()
export class UomsService {
  constructor(private readonly uow: UnitOfWork) {}

  private get repo() {
    return this.uow.manager.getRepository(Uom);
  }

  /** Ordered by code (a small, stable reference list). */
  async list(query: PageQuery) {
    const qb = this.repo.createQueryBuilder('u').orderBy('u.code', 'ASC').addOrderBy('u.id', 'ASC');
    if (query.q) qb.where('(u.code ILIKE :q OR u.name ILIKE :q)', { q: likePattern(query.q) });
    const [rows, count] = await qb.take(query.limit).skip(query.offset).getManyAndCount();
    return page(rows.map(uomView), count, query);
  }

  async create(dto: CreateUomDto) {
    const uom = this.repo.create({ tenantId: this.uow.tenantId, id: randomUUID(), ...dto, code: dto.code.toUpperCase() });
    await this.repo.insert(uom);
    return uomView(uom);
  }
}
