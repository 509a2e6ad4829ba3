import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiTags, ApiOperation } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import type { HttpResponse } from '../http/platform';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DataSource } from 'typeorm';
import { Public } from '../auth/decorators';
import { Settings } from '../config/settings';
import { DatabaseConnector } from '../database/connector';
import { ping } from './health.sql';

export const SERVICE_NAME = 'inventory-service';

/** The service's package.json: the nearest one above this file (src/ or any build output folder). */
function packageJson(dir = __dirname): { version: string } {
  const file = join(dir, 'package.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  if (dirname(dir) === dir) return { version: '0.0.0' };
  return packageJson(dirname(dir));
}
export const SERVICE_VERSION: string = packageJson().version;

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly connector: DatabaseConnector,
  ) {}

  /** Liveness and database reachability; 503 with `status: "database_unavailable"` when the database is down. */
  @Get()
  @Public()
  @ApiOkResponse({ description: '{service, status, version, timestamp}' })
  @ApiOperation({ summary: 'Readiness: the service and its database' })
  async check(@Res({ passthrough: true }) res: HttpResponse) {
    const up = await this.databaseUp();
    res.status(up ? 200 : 503);
    return {
      service: SERVICE_NAME,
      status: up ? 'ok' : 'database_unavailable',
      version: SERVICE_VERSION,
      timestamp: new Date().toISOString(),
    };
  }

  /** Liveness: the process is up and answering; no database call. */
  @Get('live')
  @Public()
  @ApiOkResponse({ description: '{service, status: "ok", version, timestamp}' })
  @ApiOperation({ summary: 'Liveness: the process answers (no database call)' })
  live() {
    return { service: SERVICE_NAME, status: 'ok', version: SERVICE_VERSION, timestamp: new Date().toISOString() };
  }

  private async databaseUp(): Promise<boolean> {
    if (!this.connector.ready) return false; // not connected or not migrated yet
    try {
      await Promise.race([
        ping(this.dataSource),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 3000).unref()),
      ]);
      return true;
    } catch {
      return false;
    }
  }
}

/** `GET /`: where to go from here (CONTRACT §1). */
@ApiTags('health')
@Controller()
export class RootController {
  constructor(private readonly settings: Settings) {}

  @Get()
  @Public()
  @ApiOkResponse({ description: '{service, version, docs, openapi, health, live}: links to the API description and the health checks' })
  @ApiOperation({ summary: 'Where the docs, the OpenAPI description and the health checks are' })
  root() {
    const docs = this.settings.OPENAPI_ENABLED ? { docs: '/docs', openapi: '/openapi.json' } : {};
    return { service: SERVICE_NAME, version: SERVICE_VERSION, ...docs, health: '/health', live: '/health/live' };
  }
}
