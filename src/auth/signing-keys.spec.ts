import { generateKeyPairSync, KeyObject } from 'node:crypto';
import { MAX_AGE_MS, MIN_REFRESH_MS, SigningKeys } from './signing-keys';

const pem = () => generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();

/** A JWKS endpoint in memory: what it publishes, how often it was asked, and whether it answers. */
function fakeIdp() {
  const idp = {
    published: new Map<string, string>(),
    fetches: 0,
    down: false,
    client: {
      getSigningKeys: async () => {
        idp.fetches++;
        if (idp.down) throw new Error('unreachable');
        return [...idp.published].map(([kid, key]) => ({ kid, getPublicKey: () => key }));
      },
    },
  };
  return idp;
}

describe('SigningKeys', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 1_000_000;
  });

  it('parses each key once and serves it from the cache', async () => {
    const idp = fakeIdp();
    idp.published.set('k1', pem());
    const keys = new SigningKeys(idp.client as never, now);
    const first = await keys.get('k1');
    expect(first).toBeInstanceOf(KeyObject);
    for (let i = 0; i < 50; i++) expect(await keys.get('k1')).toBe(first);
    expect(idp.fetches).toBe(1);
  });

  it('fetches at most once per 10 s however many unknown kids arrive, also in parallel', async () => {
    const idp = fakeIdp();
    idp.published.set('k1', pem());
    const keys = new SigningKeys(idp.client as never, now);
    await keys.get('k1');
    clock += MIN_REFRESH_MS; // due for a refresh on an unknown kid
    const junk = await Promise.all(Array.from({ length: 100 }, (_, i) => keys.get(`junk-${i}`)));
    expect(junk.every((k) => k === undefined)).toBe(true);
    expect(idp.fetches).toBe(2);
    for (let s = 1; s < 10; s++) {
      clock += 1000;
      await keys.get(`junk-later-${s}`);
    }
    expect(idp.fetches).toBe(2);
    clock += 1000;
    await keys.get('junk-after-10s');
    expect(idp.fetches).toBe(3);
    // Valid keys were never locked out meanwhile.
    expect(await keys.get('k1')).toBeInstanceOf(KeyObject);
  });

  it('accepts a newly published key within 10 s, even during a flood of junk kids', async () => {
    const idp = fakeIdp();
    idp.published.set('k1', pem());
    const keys = new SigningKeys(idp.client as never, now);
    await keys.get('junk');
    idp.published.set('k2', pem());
    expect(await keys.get('k2')).toBeUndefined(); // asked too soon after the last fetch
    clock += MIN_REFRESH_MS;
    expect(await keys.get('k2')).toBeInstanceOf(KeyObject);
  });

  it('refreshes known keys after their maximum age; keeps them while the IdP is down', async () => {
    const idp = fakeIdp();
    idp.published.set('k1', pem());
    const keys = new SigningKeys(idp.client as never, now);
    const k1 = await keys.get('k1');
    clock += MAX_AGE_MS + 1;
    idp.down = true;
    expect(await keys.get('k1')).toBe(k1);
    expect(idp.fetches).toBe(2);
    await expect(keys.get('unknown')).resolves.toBeUndefined(); // within 10 s of the failed fetch: not asked again
    clock += MIN_REFRESH_MS;
    await expect(keys.get('unknown')).rejects.toThrow('unreachable');
  });

  it('a token without kid uses the only key, and none when the IdP publishes several', async () => {
    const idp = fakeIdp();
    idp.published.set('k1', pem());
    const keys = new SigningKeys(idp.client as never, now);
    expect(await keys.get(undefined)).toBeInstanceOf(KeyObject);
    idp.published.set('k2', pem());
    clock += MAX_AGE_MS + 1;
    expect(await keys.get(undefined)).toBeUndefined();
  });
});
