import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { invalidField, notFound, unknownReference, withDuplicateMessages } from '../../common/errors';
import { assertVersion } from '../../common/versioning';
import { UnitOfWork } from '../../database/unit-of-work';
import { FacilitiesService } from '../facilities/facilities.service';
import { CreateLocationDto } from './dto/create-location.dto';
import { UpdateLocationDto } from './dto/update-location.dto';
import { buildTree, Location, LocationNode, locationNode } from './location.entity';

@Injectable()
export class LocationsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly facilities: FacilitiesService,
  ) {}

  private get repo() {
    return this.uow.repository(Location);
  }

  /** The facility's whole tree: one query, nested in memory; siblings ordered by code. */
  async tree(facilityId: string): Promise<LocationNode[]> {
    await this.facilities.find(facilityId);
    const rows = await this.repo
      .createQueryBuilder('l')
      .where('l.facilityId = :facilityId', { facilityId })
      .orderBy('l.code', 'ASC')
      .addOrderBy('l.id', 'ASC')
      .getMany();
    return buildTree(rows);
  }

  /** One location with its subtree (the descendants are the rows whose path extends its path). */
  async get(facilityId: string, id: string): Promise<LocationNode> {
    await this.facilities.find(facilityId);
    const location = await this.find(facilityId, id);
    const descendants = await this.repo
      .createQueryBuilder('l')
      .where('l.facilityId = :facilityId', { facilityId })
      .andWhere('starts_with(l.path, :prefix)', { prefix: `${location.path}/` })
      .orderBy('l.code', 'ASC')
      .addOrderBy('l.id', 'ASC')
      .getMany();
    return buildTree([location, ...descendants])[0];
  }

  async create(facilityId: string, dto: CreateLocationDto): Promise<LocationNode> {
    await this.facilities.find(facilityId);
    let path = dto.code;
    if (dto.parentId) {
      const parent = await this.repo.findOne({ id: dto.parentId });
      if (!parent) throw unknownReference('parentId');
      if (parent.facilityId !== facilityId) throw invalidField('parentId', 'must be a location of the same facility');
      path = `${parent.path}/${dto.code}`;
    }
    const id = randomUUID();
    await withDuplicateMessages(
      { locations_tenant_id_facility_id_code_key: `A location with code "${dto.code}" already exists in this facility` },
      () =>
        this.repo.insert({
          ...dto,
          id,
          facilityId,
          parentId: dto.parentId ?? null,
          type: dto.type ?? 'bin',
          path,
          isActive: dto.isActive ?? true,
          createdBy: this.uow.userId,
          updatedBy: this.uow.userId,
        }),
    );
    return locationNode(await this.find(facilityId, id));
  }

  async update(facilityId: string, id: string, dto: UpdateLocationDto, ifMatch: number | undefined): Promise<LocationNode> {
    await this.facilities.find(facilityId);
    // A location of another facility is 404 whatever the If-Match: its facility is checked before its version.
    const location = await this.repo.lockVersion(id, undefined, 'Location');
    if (location.facilityId !== facilityId) throw notFound('Location');
    assertVersion(location.version, ifMatch);
    const fields = Object.fromEntries(Object.entries(dto).filter(([, v]) => v !== undefined)) as Partial<Location>;
    if (Object.keys(fields).length) await this.repo.touch(id, fields);
    return this.get(facilityId, id);
  }

  /** A location of this facility, or 404 (also for one of another facility or tenant). */
  private async find(facilityId: string, id: string): Promise<Location> {
    const location = await this.repo.findOne({ facilityId, id });
    if (!location) throw notFound('Location');
    return location;
  }
}
