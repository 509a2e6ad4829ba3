import { Body, Controller, Get, Patch, Post, Query } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../../auth/decorators';
import { UuidParam } from '../../common/uuid';
import { IfMatch } from '../../common/versioning';
import { CreateFacilityDto } from './dto/create-facility.dto';
import { FacilityQuery } from './dto/facility-query.dto';
import { UpdateFacilityDto } from './dto/update-facility.dto';
import { FacilitiesService } from './facilities.service';
import { Returns } from '../../common/responses';
import { FacilityResponse } from '../catalog.responses';

const FACILITY_SHAPE = 'A facility is {id, code, name, type, address, isActive, version, createdAt, updatedAt}.';

@ApiTags('catalog')
@Returns(FacilityResponse)
@Controller('v1/facilities')
export class FacilitiesController {
  constructor(private readonly facilities: FacilitiesService) {}

  @Get()
  @Permissions('catalog:read')
  @ApiOperation({ summary: 'List facilities', description: `q: case-insensitive substring of code or name. Newest first (createdAt, id). ${FACILITY_SHAPE}` })
  list(@Query() query: FacilityQuery) {
    return this.facilities.list(query);
  }

  @Get(':id')
  @Permissions('catalog:read')
  @ApiOperation({ summary: 'One facility', description: FACILITY_SHAPE })
  async get(@UuidParam('id', 'Facility') id: string) {
    return { data: await this.facilities.get(id) };
  }

  @Post()
  @Permissions('catalog:write')
  @ApiOperation({ summary: 'Create a facility', description: `Duplicate code → 409 duplicate. ${FACILITY_SHAPE}` })
  async create(@Body() body: CreateFacilityDto) {
    return { data: await this.facilities.create(body) };
  }

  @Patch(':id')
  @Permissions('catalog:write')
  @ApiHeader({ name: 'If-Match', required: false, description: 'expected version, e.g. "3" → 412 version_conflict if it moved on' })
  @ApiOperation({ summary: 'Update a facility', description: `Any create field. ${FACILITY_SHAPE}` })
  async update(@UuidParam('id', 'Facility') id: string, @Body() body: UpdateFacilityDto, @IfMatch() ifMatch: number | undefined) {
    return { data: await this.facilities.update(id, body, ifMatch) };
  }
}
