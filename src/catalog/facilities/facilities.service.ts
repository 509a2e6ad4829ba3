import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { notFound, withDuplicateMessages } from '../../common/errors';
import { likePattern, Page, page } from '../../common/pagination';
import { UnitOfWork } from '../../database/unit-of-work';
import { CreateFacilityDto } from './dto/create-facility.dto';
import { FacilityQuery } from './dto/facility-query.dto';
import { UpdateFacilityDto } from './dto/update-facility.dto';
import { Facility, facilityView, FacilityView } from './facility.entity';
import { cursorOf, newestFirst } from '../../common/cursor';
import { keysetPageOf } from '../../database/keyset-page';

/** The list's documented order (cursor paging: src/common/cursor.ts). */
const FACILITIES = newestFirst('facilities', 'f');

@Injectable()
export class FacilitiesService {
  constructor(private readonly uow: UnitOfWork) {}

  private get repo() {
    return this.uow.repository(Facility);
  }

  /** Newest first (createdAt, then id); q searches code and name. */
  async list(query: FacilityQuery): Promise<Page<FacilityView>> {
    const at = cursorOf(FACILITIES, query);
    const qb = this.repo
      .createQueryBuilder('f');
    if (query.q) qb.andWhere('(f.code ILIKE :q OR f.name ILIKE :q)', { q: likePattern(query.q) });
    if (query.type) qb.andWhere('f.type = :type', { type: query.type });
    if (query.isActive !== undefined) qb.andWhere('f.isActive = :isActive', { isActive: query.isActive });
    const { rows, count, nextCursor } = await keysetPageOf(qb, FACILITIES, query, at);
    return page(rows.map(facilityView), count, query, nextCursor);
  }

  async get(id: string): Promise<FacilityView> {
    return facilityView(await this.find(id));
  }

  /** The facility, or 404 (also for another tenant's). `forUpdate` locks the row for the transaction. */
  async find(id: string, forUpdate = false): Promise<Facility> {
    const facility = await this.repo.findOne({ id }, { lock: forUpdate ? 'update' : undefined });
    if (!facility) throw notFound('Facility');
    return facility;
  }

  async create(dto: CreateFacilityDto): Promise<FacilityView> {
    const id = randomUUID();
    await withDuplicateMessages(duplicateCode(dto.code), () =>
      this.repo.insert({
        ...dto,
        id,
        type: dto.type ?? 'warehouse',
        address: dto.address ?? null,
        isActive: dto.isActive ?? true,
        createdBy: this.uow.userId,
        updatedBy: this.uow.userId,
      }),
    );
    return this.get(id);
  }

  async update(id: string, dto: UpdateFacilityDto, ifMatch: number | undefined): Promise<FacilityView> {
    const facility = await this.repo.lockVersion(id, ifMatch, 'Facility');
    const fields = Object.fromEntries(Object.entries(dto).filter(([, v]) => v !== undefined)) as Partial<Facility>;
    if (!Object.keys(fields).length) return facilityView(facility);
    await withDuplicateMessages(duplicateCode(fields.code ?? facility.code), () =>
      this.repo.touch(id, fields),
    );
    return this.get(id);
  }
}

const duplicateCode = (code: string) => ({ facilities_tenant_id_code_key: `A facility with code "${code}" already exists` });
