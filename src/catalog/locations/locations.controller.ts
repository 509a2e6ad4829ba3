import { Body, Controller, Get, Patch, Post } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Permissions } from '../../auth/decorators';
import { UuidParam } from '../../common/uuid';
import { IfMatch } from '../../common/versioning';
import { CreateLocationDto } from './dto/create-location.dto';
import { UpdateLocationDto } from './dto/update-location.dto';
import { LocationsService } from './locations.service';
import { Returns } from '../../common/responses';
import { LocationResponse } from '../catalog.responses';

const LOCATION_SHAPE =
  'A location is {id, facilityId, parentId, code, name, type, path, isActive, version, createdAt, updatedAt, children[]}; ' +
  "path is the codes from the root joined by '/' (e.g. A/A-01/A-01-03); children are ordered by code.";

@ApiTags('catalog')
@Returns(LocationResponse)
@Controller('v1/facilities/:facilityId/locations')
export class LocationsController {
  constructor(private readonly locations: LocationsService) {}

  @Returns([LocationResponse])
  @Get()
  @Permissions('catalog:read')
  @ApiOperation({ summary: "The facility's location tree", description: `{data: [root locations, each with nested children]}. ${LOCATION_SHAPE}` })
  async tree(@UuidParam('facilityId', 'Facility') facilityId: string) {
    return { data: await this.locations.tree(facilityId) };
  }

  @Get(':locationId')
  @Permissions('catalog:read')
  @ApiOperation({ summary: 'One location with its subtree', description: LOCATION_SHAPE })
  async get(@UuidParam('facilityId', 'Facility') facilityId: string, @UuidParam('locationId', 'Location') locationId: string) {
    return { data: await this.locations.get(facilityId, locationId) };
  }

  @Post()
  @Permissions('catalog:write')
  @ApiOperation({
    summary: 'Create a location',
    description:
      'parentId must be a location of the same facility (unknown → 404, of another facility → 400 validation_failed); ' +
      `code is unique within the facility (409 duplicate); the same code may exist in other facilities. ${LOCATION_SHAPE}`,
  })
  async create(@UuidParam('facilityId', 'Facility') facilityId: string, @Body() body: CreateLocationDto) {
    return { data: await this.locations.create(facilityId, body) };
  }

  @Patch(':locationId')
  @Permissions('catalog:write')
  @ApiHeader({ name: 'If-Match', required: false, description: 'expected version, e.g. "3" → 412 version_conflict if it moved on' })
  @ApiOperation({
    summary: 'Update a location',
    description: `Only name, type and isActive: code and parent are fixed, because path and the tree derive from them. ${LOCATION_SHAPE}`,
  })
  async update(
    @UuidParam('facilityId', 'Facility') facilityId: string,
    @UuidParam('locationId', 'Location') locationId: string,
    @Body() body: UpdateLocationDto,
    @IfMatch() ifMatch: number | undefined,
  ) {
    return { data: await this.locations.update(facilityId, locationId, body, ifMatch) };
  }
}
