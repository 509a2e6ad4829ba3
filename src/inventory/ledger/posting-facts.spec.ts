import type { ItemRef, LocationRef, StatusRef } from '../../documents/references.sql';
import { MAX_REMEMBERED, PostingFacts } from './posting-facts';

const item = (id: string) => ({ id, itemNo: id, kind: 'stock', isActive: true, lotTracked: false, serialTracked: false, expiryTracked: false, baseUomId: 'u', decimals: 0, version: 1 }) as ItemRef;
const location = (id: string) => ({ id, facilityId: 'f', code: id, isActive: true, facilityActive: true, version: 1, facilityVersion: 1 }) as LocationRef;
const statuses: StatusRef[] = [{ id: 's', code: 'AVAILABLE', isAvailable: true }];

describe('PostingFacts', () => {
  it('remembers what a tenant\'s posting was checked against, per tenant', () => {
    const facts = new PostingFacts();
    facts.remember('t1', { items: new Map([['i', item('i')]]), locations: new Map([['l', location('l')]]), statuses });
    expect(facts.lookup('t1', 'i', 'l')?.items.get('i')?.itemNo).toBe('i');
    expect(facts.lookup('t2', 'i', 'l')).toBeUndefined();
    expect(facts.lookup('t1', 'i', 'other')).toBeUndefined();
  });

  it(`keeps at most ${MAX_REMEMBERED} items, dropping the least recently remembered`, () => {
    const facts = new PostingFacts();
    const many = new Map(Array.from({ length: MAX_REMEMBERED + 1 }, (_, n) => [`i${n}`, item(`i${n}`)]));
    facts.remember('t', { items: many, locations: new Map([['l', location('l')]]), statuses });
    expect(facts.lookup('t', 'i0', 'l')).toBeUndefined();
    expect(facts.lookup('t', `i${MAX_REMEMBERED}`, 'l')).toBeDefined();
  });
});
