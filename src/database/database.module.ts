import { DynamicModule, Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TenantProvisioner } from '../tenancy/tenant-provisioner';
import { dataSourceOptions, POOL_SETTINGS, PoolSettings } from './data-source';
import { UnitOfWork } from './unit-of-work';

/** The data source, the unit of work and what every domain module needs from the database. */
@Global()
@Module({})
export class DatabaseModule {
  static forRoot(url: string, pool: PoolSettings): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [TypeOrmModule.forRoot({ ...dataSourceOptions(url, pool), retryAttempts: 3, retryDelay: 1000 })],
      providers: [UnitOfWork, TenantProvisioner, { provide: POOL_SETTINGS, useValue: pool }],
      exports: [UnitOfWork, TenantProvisioner],
    };
  }
}
