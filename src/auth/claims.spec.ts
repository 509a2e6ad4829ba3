import { principalFromClaims } from './claims';

const NS = 'https://inventory.test/';
const TENANT = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
const base = { exp: 2_000_000_000, sub: 'user-1', [`${NS}tenant_id`]: TENANT };
const principal = (claims: Record<string, unknown>) => principalFromClaims({ ...base, ...claims }, NS);
const refused = (claims: Record<string, unknown>) => {
  try {
    principal(claims);
  } catch (err) {
    return err as { status: number; code: string; message: string };
  }
  throw new Error('accepted');
};

describe('principalFromClaims (CONTRACT §3 claim rules)', () => {
  it('takes tenant, subject and the permissions array', () => {
    const p = principal({ [`${NS}permissions`]: ['catalog:read', 'inventory:write'], scope: 'ignored:scope' });
    expect(p).toEqual({ tenantId: TENANT, userId: 'user-1', permissions: new Set(['catalog:read', 'inventory:write']) });
  });

  it('uses scope only when the permissions claim is absent', () => {
    expect([...principal({ scope: 'catalog:read  sales:read' }).permissions]).toEqual(['catalog:read', 'sales:read']);
    expect([...principal({}).permissions]).toEqual([]);
  });

  it.each([
    ['a string', 'catalog:read'],
    ['an array holding a number', ['catalog:read', 7]],
    ['an object', { 'catalog:read': true }],
    ['null', null],
  ])('refuses a permissions claim that is %s (401, no fall-back to scope)', (_, value) => {
    const err = refused({ [`${NS}permissions`]: value, scope: 'catalog:read' });
    expect(err).toMatchObject({ status: 401, code: 'unauthorized', message: expect.stringContaining('permissions') });
  });

  it.each([
    ['NUL', 'user\u0000x'],
    ['a newline', 'user\nadmin'],
    ['DEL', 'user\u007f'],
    ['a C1 control', 'user\u0085'],
    ['256 characters', 'u'.repeat(256)],
    ['empty', ''],
    ['a number', 42],
  ])('refuses a sub with %s (401)', (_, sub) => {
    expect(refused({ sub })).toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it('accepts a sub of 255 characters with spaces and non-ASCII letters', () => {
    const sub = `Zoë Ø ${'x'.repeat(249)}`;
    expect(principal({ sub }).userId).toBe(sub);
  });

  it('refuses a missing or malformed tenant and a missing exp', () => {
    expect(refused({ [`${NS}tenant_id`]: 'tenant-1' }).status).toBe(401);
    expect(refused({ exp: undefined }).status).toBe(401);
  });
});
