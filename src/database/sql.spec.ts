import { empty, join, raw, sql } from './sql';

/** The expected text: each `?` becomes the next PostgreSQL placeholder, counted from 1 (an oracle independent of the tag). */
const numbered = (text: string) => {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
};

describe('sql tag', () => {
  it('numbers every value in order and keeps them as parameters', () => {
    const q = sql`SELECT a FROM t WHERE tenant_id = ${'t1'} AND id = ${'x'} AND n > ${3}`;
    expect(q.text).toBe(numbered('SELECT a FROM t WHERE tenant_id = ? AND id = ? AND n > ?'));
    expect(q.values).toEqual(['t1', 'x', 3]);
  });

  it('builds the text of one call site once: the same string every call', () => {
    const at = (id: string) => sql`SELECT 1 WHERE id = ${id}`;
    const a = at('a');
    const b = at('b');
    expect(a.text).toBe(b.text);
    expect(b.values).toEqual(['b']);
  });

  it('inlines fragments with their parameters renumbered, raw text as it is, and joins', () => {
    const cond = sql`status = ${'open'} AND qty > ${5}`;
    const rows = join([sql`(${1}, ${'a'})`, sql`(${2}, ${'b'})`]);
    const q = sql`WITH v(n, s) AS (VALUES ${rows}) SELECT * FROM ${raw('sales_orders')} WHERE tenant_id = ${'t'} AND ${cond}${empty}`;
    expect(q.text).toBe(numbered('WITH v(n, s) AS (VALUES (?, ?), (?, ?)) SELECT * FROM sales_orders WHERE tenant_id = ? AND status = ? AND qty > ?'));
    expect(q.values).toEqual([1, 'a', 2, 'b', 't', 'open', 5]);
  });

  it('renumbers past nine parameters correctly', () => {
    const many = join(Array.from({ length: 11 }, (_, i) => sql`${i}`));
    const q = sql`SELECT ${'first'}, ${many}`;
    expect(q.text).toBe(numbered(`SELECT ${Array(12).fill('?').join(', ')}`));
    expect(q.values[11]).toBe(10);
  });
});
