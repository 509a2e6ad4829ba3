import { Module } from '@nestjs/common';
import { UomsController } from './uoms/uoms.controller';
import { UomsService } from './uoms/uoms.service';

@Module({
  controllers: [UomsController],
  providers: [UomsService],
  exports: [UomsService],
})
export class CatalogModule {}
