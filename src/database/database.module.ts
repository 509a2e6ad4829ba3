import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TenantProvisioner } from '../tenancy/tenant-provisioner';
import { dataSourceOptions, POOL_SETTINGS, PoolSettings } from './data-source';
import { DatabaseConnector } from './connector';
import { UnitOfWork } from './unit-of-work';

/** The data source, the unit of work and what every domain module needs from the database. */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(url: string, pool: PoolSettings): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [TypeOrmModule.forRoot({ ...dataSourceOptions(url, pool), manualInitialization: true })],
      providers: [UnitOfWork, TenantProvisioner, DatabaseConnector, { provide: POOL_SETTINGS, useValue: pool }],
      exports: [UnitOfWork, TenantProvisioner, DatabaseConnector],
    };
  }
}
