import { DynamicModule, Module } from '@nestjs/common';
import { Metrics } from './metrics';
import { MetricsController } from './metrics.controller';

/** Metrics are always counted (cheap); `/metrics` serves them only when enabled. */
@Module({})
export class MetricsModule {
  static forRoot(enabled: boolean): DynamicModule {
    return { module: MetricsModule, global: true, providers: [Metrics], exports: [Metrics], controllers: enabled ? [MetricsController] : [] };
  }
}
