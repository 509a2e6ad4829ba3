import { Module } from '@nestjs/common';
import { FacilitiesController } from './facilities/facilities.controller';
import { FacilitiesService } from './facilities/facilities.service';
import { ItemsController } from './items/items.controller';
import { ItemsService } from './items/items.service';
import { LocationsController } from './locations/locations.controller';
import { LocationsService } from './locations/locations.service';
import { UomsController } from './uoms/uoms.controller';
import { UomsService } from './uoms/uoms.service';

@Module({
  controllers: [UomsController, ItemsController, FacilitiesController, LocationsController],
  providers: [UomsService, ItemsService, FacilitiesService, LocationsService],
  exports: [UomsService, ItemsService, FacilitiesService, LocationsService],
})
export class CatalogModule {}
