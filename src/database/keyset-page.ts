import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { cursorAt, Keyset, keysetCondition, Position } from '../common/cursor';
import type { PageQuery } from '../common/pagination';

/**
 * One page of a repository list (a query builder of TenantRepository over the list's filters, without
 * ORDER BY or LIMIT) in `keyset`'s order (its keys: property paths of the main alias, `f.createdAt`), from
 * the position `at` (`cursorOf`; keyset paging, named parameters) or from `query.offset`; the total count
 * of the filtered rows; and `nextCursor` after the page's last row when more follow (one row more is read
 * to know). The key values come from the database as text, so a timestamp keeps its microseconds.
 */
export async function keysetPageOf<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  keyset: Keyset,
  query: PageQuery,
  at: Position | undefined,
): Promise<{ rows: T[]; count: number; nextCursor: string | null }> {
  const main = qb.expressionMap.mainAlias!;
  const columns = keyset.keys.map((k) => {
    const [alias, property] = k.expr.split('.');
    const column = main.metadata.findColumnWithPropertyPath(property);
    if (alias !== main.name || !column) throw new Error(`keyset ${keyset.list}: ${k.expr} is not a column of ${main.name}`);
    return `${qb.escape(alias)}.${qb.escape(column.databaseName)}`;
  });
  keyset.orderBy.forEach((o, i) => (i ? qb.addOrderBy(columns[i], o.dir, o.nulls) : qb.orderBy(columns[i], o.dir, o.nulls)));
  const count = await qb.getCount();
  if (at) {
    const params: Record<string, string | null> = {};
    const value = (i: number) => {
      params[`keyset_${i}`] = at[i];
      return `CAST(:keyset_${i} AS ${keyset.keys[i].type})`;
    };
    const condition = keysetCondition<string>(keyset, at, {
      compare: (i, op) => `${columns[i]} ${op} ${value(i)}`,
      rows: (op) => `(${columns.join(', ')}) ${op} (${keyset.keys.map((_, i) => value(i)).join(', ')})`,
      isNull: (i, negated) => `${columns[i]} IS ${negated ? 'NOT NULL' : 'NULL'}`,
      and: (parts) => `(${parts.join(' AND ')})`,
      or: (parts) => `(${parts.join(' OR ')})`,
      never: 'FALSE',
    });
    qb.andWhere(condition, params);
  }
  columns.forEach((c, i) => qb.addSelect(`${c}::text`, `keyset_${i}`));
  const { entities, raw } = await qb.limit(query.limit + 1).offset(query.offset).getRawAndEntities();
  if (entities.length !== raw.length) throw new Error(`keyset ${keyset.list}: a page row per entity expected`);
  if (entities.length <= query.limit) return { rows: entities, count, nextCursor: null };
  const last = raw[query.limit - 1] as Record<string, string | null>;
  return { rows: entities.slice(0, query.limit), count, nextCursor: cursorAt(keyset, query, keyset.keys.map((_, i) => last[`keyset_${i}`])) };
}
