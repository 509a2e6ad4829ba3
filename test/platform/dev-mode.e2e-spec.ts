import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as SettingsModule from '../../src/config/settings';
import { DIST_DIR, fromDist } from '../support/dist';
import { startApp, testDatabaseUrl, TestContext } from '../support/app';

const { loadSettings, SettingsError } = fromDist<typeof SettingsModule>('config/settings');

/** Runs the compiled service (`node <dist>/main.js`) with only `env`, in an empty folder (no .env). */
function spawnService(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cwd = mkdtempSync(join(tmpdir(), 'inventory-devmode-'));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(DIST_DIR, 'main.js')], {
      cwd,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', DATABASE_URL: testDatabaseUrl(), PORT: '0', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      rmSync(cwd, { recursive: true, force: true });
      resolve({ code, stdout, stderr });
    });
  });
}

type Run = Awaited<ReturnType<typeof spawnService>>;
/** Every run is started when the file loads, so the slow process starts overlap; tests await theirs. */
const runs = new Map<string, Promise<Run>>();
const runService = (env: Record<string, string>): Promise<Run> => {
  const key = JSON.stringify(env);
  if (!runs.has(key)) runs.set(key, spawnService(env));
  return runs.get(key)!;
};
const JWT_ENV = { IDP_ISSUER_URL: 'https://idp.example.com/', IDP_AUDIENCE: 'api' };
const DEV_WITH_ISSUER = { AUTH_MODE: 'dev', IDP_ISSUER_URL: 'http://x/' };
const DEV_IN_PRODUCTION = { AUTH_MODE: 'dev', NODE_ENV: 'production' };
const BAD_SETTINGS: Array<[string, Record<string, string>]> = [
  ['PORT', { PORT: 'abc' }],
  ['IDP_ALGORITHMS', { IDP_ALGORITHMS: 'HS256' }],
];
beforeAll(() => {
  for (const env of [DEV_WITH_ISSUER, DEV_IN_PRODUCTION, ...BAD_SETTINGS.map(([, e]) => ({ ...JWT_ENV, ...e }))]) void runService(env);
});

describe('AUTH_MODE=dev', () => {
  const devTenant = randomUUID();
  let dev: TestContext;
  beforeAll(async () => {
    dev = await startApp({ AUTH_MODE: 'dev', IDP_ISSUER_URL: '', IDP_AUDIENCE: '', DEV_TENANT_ID: devTenant, DEV_USER_ID: 'dev-tester' });
  });
  afterAll(() => dev.close());

  it('accepts requests without a token as DEV_TENANT_ID with all permissions', async () => {
    const created = await dev.http.post('/v1/uoms').send({ code: 'DEVU', name: 'Dev unit', decimals: 2 }).expect(201);
    const list = await dev.http.get('/v1/uoms').expect(200);
    expect(list.body.count).toBe(9); // the 8 seeded for the dev tenant + ours
    // any token is ignored, not checked
    await dev.http.get('/v1/uoms').set('Authorization', 'Bearer garbage').expect(200);

    const rows = await dev.db.query(`SELECT tenant_id FROM uoms WHERE id = $1`, [created.body.data.id]);
    expect(rows).toEqual([{ tenant_id: devTenant }]);
  });

  it('is the same tenant a JWT of DEV_TENANT_ID sees in a jwt-mode app', async () => {
    await dev.http.post('/v1/uoms').send({ code: 'SHARED', name: 'Shared', decimals: 0 }).expect(201);
    const jwt = await startApp();
    try {
      const token = await jwt.idp.token({ tenantId: devTenant, permissions: ['catalog:read'] });
      const res = await jwt.http.get('/v1/uoms?q=SHARED').set('Authorization', `Bearer ${token}`).expect(200);
      expect(res.body.data).toEqual([{ id: expect.any(String), code: 'SHARED', name: 'Shared', decimals: 0 }]);
      await jwt.http.get('/v1/uoms').expect(401); // the jwt app still wants a token
    } finally {
      await jwt.close();
    }
  });

  it('records DEV_USER_ID as the acting user', async () => {
    const uoms = await dev.http.get('/v1/uoms?q=EA').expect(200);
    const ea = uoms.body.data.find((u: { code: string }) => u.code === 'EA');
    const item = await dev.http.post('/v1/items').send({ itemNo: 'DEV-1', name: 'Dev item', baseUomId: ea.id }).expect(201);
    const rows = await dev.db.query(`SELECT created_by FROM items WHERE tenant_id = $1 AND id = $2`, [devTenant, item.body.data.id]);
    expect(rows).toEqual([{ created_by: 'dev-tester' }]);
  });
});

describe('dev mode is refused where it would be unsafe', () => {
  const base = { AUTH_MODE: 'dev' };
  const refusal = (env: NodeJS.ProcessEnv): Error => {
    try {
      loadSettings(env);
    } catch (err) {
      return err as Error;
    }
    throw new Error('loadSettings accepted the configuration');
  };

  it('when IDP_ISSUER_URL is set', () => {
    const err = refusal({ ...base, IDP_ISSUER_URL: 'https://idp.example.com/' });
    expect(err).toBeInstanceOf(SettingsError);
    expect(err.message).toMatch(/AUTH_MODE=dev is refused while IDP_ISSUER_URL or IDP_AUDIENCE is set/);
  });

  it('when IDP_AUDIENCE is set', () => {
    expect(refusal({ ...base, IDP_AUDIENCE: 'api' }).message).toMatch(/AUTH_MODE=dev is refused while IDP_ISSUER_URL or IDP_AUDIENCE/);
  });

  it('when NODE_ENV=production', () => {
    expect(refusal({ ...base, NODE_ENV: 'production' }).message).toMatch(/AUTH_MODE=dev is refused when NODE_ENV=production/);
  });

  it('but is allowed otherwise', () => {
    expect(loadSettings({ ...base, NODE_ENV: 'development' }).AUTH_MODE).toBe('dev');
  });

  it('jwt mode needs an issuer and an audience', () => {
    const msg = refusal({ AUTH_MODE: 'jwt' }).message;
    expect(msg).toMatch(/IDP_ISSUER_URL is required/);
    expect(msg).toMatch(/IDP_AUDIENCE is required/);
  });

  it('the compiled service exits non-zero with the reason and never listens', async () => {
    const run = await runService(DEV_WITH_ISSUER);
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBeNull(); // exited by itself, not killed by the timeout
    expect(run.stderr).toMatch(/AUTH_MODE=dev is refused while IDP_ISSUER_URL or IDP_AUDIENCE is set/);
    expect(run.stdout).not.toMatch(/listening/);
  });

  it('and so does it in production', async () => {
    const run = await runService(DEV_IN_PRODUCTION);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/NODE_ENV=production/);
    expect(run.stdout).not.toMatch(/listening/);
  });
});

describe('a bad setting stops startup naming the setting', () => {
  it.each([
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['IDP_ALGORITHMS', { IDP_ALGORITHMS: 'HS256' }],
    ['IDP_ALGORITHMS', { IDP_ALGORITHMS: 'RS256,none' }],
    ['RATE_LIMIT_PER_MINUTE', { RATE_LIMIT_PER_MINUTE: '-1' }],
    ['DB_MIGRATE', { DB_MIGRATE: 'maybe' }],
    ['AUTH_MODE', { AUTH_MODE: 'none' }],
    ['DEV_TENANT_ID', { AUTH_MODE: 'dev', DEV_TENANT_ID: 'acme' }],
    ['IDP_ISSUER_URL', { IDP_ISSUER_URL: 'not a url', IDP_AUDIENCE: 'api' }],
  ])('%s (%j) in loadSettings', (setting, env) => {
    const jwt = { IDP_ISSUER_URL: 'https://idp.example.com/', IDP_AUDIENCE: 'api' };
    expect(() => loadSettings({ ...jwt, ...env })).toThrow(new RegExp(`^Invalid configuration:[^]*\\b${setting}=`));
  });

  it('an empty value means unset: the default applies', () => {
    const empty = Object.fromEntries(['PORT', 'HOST', 'DB_MIGRATE', 'IDP_ALGORITHMS', 'RATE_LIMIT_PER_MINUTE', 'LOG_LEVEL', 'NODE_ENV', 'AUTH_MODE'].map((k) => [k, '']));
    const settings = loadSettings({ IDP_ISSUER_URL: 'https://idp.example.com/', IDP_AUDIENCE: 'api', ...empty });
    expect(settings).toMatchObject({ PORT: 3000, HOST: '0.0.0.0', DB_MIGRATE: true, IDP_ALGORITHMS: ['RS256'], RATE_LIMIT_PER_MINUTE: 6000, AUTH_MODE: 'jwt' });
  });

  it.each(BAD_SETTINGS)('%s (%j) in the compiled service', async (setting, env) => {
    const run = await runService({ ...JWT_ENV, ...env });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`\\b${setting}=`));
    expect(run.stdout).not.toMatch(/listening/);
  });
});
