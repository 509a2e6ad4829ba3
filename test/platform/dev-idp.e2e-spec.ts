import { ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { startApp, TestContext } from '../support/app';
import { freePort } from '../support/ports';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

/** `npm run idp`: the development identity provider as its own process; resolves once it listens. */
async function startDevIdp(port: number, keyFile: string): Promise<{ child: ChildProcess; issuer: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [join(root, 'scripts', 'dev-idp.js')], {
    env: { PATH: process.env.PATH ?? '', IDP_PORT: String(port), IDP_KEY_FILE: keyFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => output.includes('service settings:') && resolve());
    child.once('exit', (code) => reject(new Error(`dev-idp exited with ${code}: ${output}`)));
  });
  const issuer = JSON.parse(output.split('\n')[0]).issuer as string;
  return {
    child,
    issuer,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `npm run token -- …`: stdout, stderr and exit code. */
const token = (args: string[]) =>
  run(process.execPath, [join(root, 'scripts', 'token.js'), ...args], { env: { PATH: process.env.PATH ?? '' } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout: stdout.trim(), stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }),
  );

describe('npm run idp / npm run token: jwt mode without an external identity provider', () => {
  const dir = mkdtempSync(join(tmpdir(), 'inventory-dev-idp-'));
  const keyFile = join(dir, 'key.pem');
  let idp: Awaited<ReturnType<typeof startDevIdp>>;
  let ctx: TestContext;

  beforeAll(async () => {
    idp = await startDevIdp(0, keyFile); // it binds a port itself and names it in its issuer
    // The service in jwt mode pointed at it with its documented defaults (audience, claim namespace).
    ctx = await startApp({ IDP_ISSUER_URL: idp.issuer, IDP_AUDIENCE: 'https://inventory.example.com/api', CLAIM_NAMESPACE: 'https://inventory.example.com/' });
  });
  afterAll(async () => {
    await ctx?.close();
    await idp?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a token from npm run token is accepted with its permissions: 200 where it has them, 403 where it does not', async () => {
    const tenant = randomUUID();
    const read = await token(['--idp', idp.issuer, '--tenant', tenant, '--permissions', 'catalog:read', '--sub', 'alice']);
    expect(read).toMatchObject({ code: 0, stdout: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/) });
    const auth = { Authorization: `Bearer ${read.stdout}` };
    const uoms = await ctx.http.get('/v1/uoms').set(auth).expect(200);
    expect(uoms.body.data.length).toBeGreaterThan(0);
    const refused = await ctx.http.post('/v1/uoms').set(auth).send({ code: 'PAL', name: 'Pallet', decimals: 0 }).expect(403);
    expect(refused.body).toMatchObject({ error: 'forbidden', message: expect.stringMatching(/catalog:write/) });
    // The token is the tenant's: what it writes with all permissions is its own.
    const all = await token(['--idp', idp.issuer, '--tenant', tenant]);
    await ctx.http.post('/v1/uoms').set({ Authorization: `Bearer ${all.stdout}` }).send({ code: 'PAL', name: 'Pallet', decimals: 0 }).expect(201);
    expect(await ctx.db.query(`SELECT code FROM uoms WHERE tenant_id = $1 AND code = 'PAL'`, [tenant])).toEqual([{ code: 'PAL' }]);
  });

  it('clear errors: an unknown permission, a bad tenant, no identity provider running', async () => {
    expect(await token(['--idp', idp.issuer, '--permissions', 'catalog:read,stock:steal'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/unknown permissions: stock:steal/) });
    expect(await token(['--idp', idp.issuer, '--tenant', 'acme'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/tenant_id must be a UUID/) });
    const nobody = `http://127.0.0.1:${await freePort()}/`;
    expect(await token(['--idp', nobody])).toMatchObject({ code: 1, stderr: expect.stringMatching(/no identity provider at .* \(start it with npm run idp\)/) });
  });

  it('keeps its key across restarts (the same kid: tokens issued before stay valid), and serves discovery', async () => {
    const jwks = async (issuer: string) => (await (await fetch(`${issuer}.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
    const before = await jwks(idp.issuer);
    const port = Number(new URL(idp.issuer).port);
    await idp.stop();
    idp = await startDevIdp(port, keyFile);
    expect((await jwks(idp.issuer)).keys.map((k) => k.kid)).toEqual(before.keys.map((k) => k.kid));
    const discovery = (await (await fetch(`${idp.issuer}.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(discovery).toMatchObject({ issuer: idp.issuer, jwks_uri: `${idp.issuer}.well-known/jwks.json`, token_endpoint: `${idp.issuer}oauth/token` });
  });
});
