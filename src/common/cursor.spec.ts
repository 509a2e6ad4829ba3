import { IsInt, IsOptional, IsString, Min } from 'class-validator';
import { cursorAt, cursorList, cursorOf, Keyset, keysetCondition, Position } from './cursor';

/** PageQuery's fields and checks (pagination.ts itself loads @nestjs/swagger, an ES module Jest cannot load). */
class PageQuery {
  @IsInt() @Min(1) limit = 50;
  @IsInt() @Min(0) offset = 0;
  @IsOptional() @IsString() after?: string;
  @IsOptional() @IsString() q?: string;
}

type Value = number | null;
type Pred = (row: Value[]) => boolean;

/** The keyset condition evaluated in memory: what the SQL means, on rows of numbers (NULL as null). */
const evaluate = (keyset: Keyset, at: Value[]): Pred =>
  keysetCondition<Pred>(keyset, at.map((v) => (v === null ? null : String(v))) as Position, {
    compare: (i, op) => (row) => {
      const [a, b] = [row[i], at[i]];
      if (a === null || b === null) return false; // SQL: a comparison with NULL is not true
      return { '<': a < b, '>': a > b, '=': a === b, '<=': a <= b, '>=': a >= b }[op];
    },
    rows: (op) => (row) => {
      for (let i = 0; i < row.length; i++) if (row[i] !== at[i]) return op === '<' ? row[i]! < at[i]! : row[i]! > at[i]!;
      return false;
    },
    isNull: (i, negated) => (row) => (row[i] === null) !== negated,
    and: (parts) => (row) => parts.every((p) => p(row)),
    or: (parts) => (row) => parts.some((p) => p(row)),
    never: () => false,
  });

/** ORDER BY of the keyset, PostgreSQL's way (NULLS LAST ascending, FIRST descending, unless said). */
const order = (keyset: Keyset) => (x: Value[], y: Value[]) => {
  for (const [i, k] of keyset.keys.entries()) {
    const [a, b] = [x[i], y[i]];
    if (a === b) continue;
    const nullsFirst = k.nulls ? k.nulls === 'first' : !!k.desc;
    if (a === null) return nullsFirst ? -1 : 1;
    if (b === null) return nullsFirst ? 1 : -1;
    return (a < b ? -1 : 1) * (k.desc ? -1 : 1);
  }
  return 0;
};

describe('keyset condition', () => {
  // A few values per key, so ties on the leading keys are common; the last key is unique.
  const rows = (nullable: boolean[]): Value[][] => {
    const out: Value[][] = [];
    for (let id = 0; id < 60; id++) out.push([...nullable.map((n, i) => (n && (id * (i + 3)) % 5 === 0 ? null : (id * 7 + i * 3) % 4)), id]);
    return out;
  };
  const cases: Array<[string, Keyset]> = [
    ['newest first (row comparison)', new Keyset('a', [{ expr: 'a', desc: true, type: 'text' }, { expr: 'id', desc: true, type: 'uuid' }])],
    ['ascending (row comparison)', new Keyset('b', [{ expr: 'a', type: 'text' }, { expr: 'b', type: 'text' }, { expr: 'id', type: 'uuid' }])],
    ['nullable first, ascending', new Keyset('c', [{ expr: 'a', type: 'text' }, { expr: 'b', nulls: 'first', type: 'text' }, { expr: 'id', type: 'uuid' }])],
    ['nullable last, ascending', new Keyset('d', [{ expr: 'a', nulls: 'last', type: 'text' }, { expr: 'b', type: 'text' }, { expr: 'id', type: 'uuid' }])],
    ['nullable, descending, mixed', new Keyset('e', [{ expr: 'a', desc: true, nulls: 'last', type: 'text' }, { expr: 'b', nulls: 'first', type: 'text' }, { expr: 'id', desc: true, type: 'uuid' }])],
  ];
  it.each(cases)('%s: the rows after each row are exactly those that follow it in the order', (_, keyset) => {
    const nullable = keyset.keys.slice(0, -1).map((k) => !!k.nulls);
    const sorted = rows(nullable).sort(order(keyset));
    sorted.forEach((at, i) => {
      const after = evaluate(keyset, at);
      expect(sorted.filter(after)).toEqual(sorted.slice(i + 1));
    });
  });
});

describe('cursors', () => {
  const list = new Keyset('things', [{ expr: 't.created_at', desc: true, type: 'timestamptz' }, { expr: 't.id', desc: true, type: 'uuid' }]);
  const position = ['2026-11-26 13:50:16.123456+00', '6f1c1d4e-8a47-4c1b-9a0e-2b9a4b5b8c11'];
  const query = (fields: Partial<PageQuery> & Record<string, unknown> = {}) => Object.assign(new PageQuery(), fields);

  it('round-trips the position and carries the filters (q) into a query that names none', () => {
    const cursor = cursorAt(list, query({ q: 'bolt' }), position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    const next = query({ after: cursor });
    expect(cursorOf(list, next)).toEqual(position);
    expect(next.q).toBe('bolt');
  });

  it('names the list a cursor came from (for a route of several lists), and nothing for what is not a cursor', () => {
    expect(cursorList(cursorAt(list, query({ q: 'bolt' }), position))).toBe('things');
    for (const text of [undefined, 'garbage', Buffer.from('null').toString('base64url'), Buffer.from('{"l":1}').toString('base64url')]) expect(cursorList(text)).toBeUndefined();
  });

  it.each([
    ['offset > 0', (c: string) => query({ after: c, offset: 5 })],
    ['other filters', (c: string) => query({ after: c, q: 'nut' })],
    ['another list', () => query({ after: cursorAt(new Keyset('other', list.keys), query({ q: 'bolt' }), position) })],
    ['garbage', () => query({ after: 'garbage' })],
    ['an impossible timestamp', () => query({ after: cursorAt(list, query({ q: 'bolt' }), ['2026-02-30 00:00:00+00', position[1]]) })],
    ['a NULL in a key that is never NULL', () => query({ after: cursorAt(list, query({ q: 'bolt' }), [null, position[1]]) })],
  ])('refuses %s with 400 validation_failed naming after', (_, make) => {
    const q = make(cursorAt(list, query({ q: 'bolt' }), position));
    expect(() => cursorOf(list, q)).toThrow(expect.objectContaining({ status: 400, details: [expect.objectContaining({ field: 'after' })] }));
  });
});
