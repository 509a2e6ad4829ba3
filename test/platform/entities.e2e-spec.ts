import type { DataSource } from 'typeorm';
import { startApp, TestContext } from '../support/app';

/**
 * Entities and migrations cannot drift apart: migrations are hand-written SQL, entities are TypeORM
 * classes, and this compares the two on the migrated database (information_schema). Every table has an
 * entity; every entity column exists in its table with a compatible type, the same nullability and, for
 * numerics, the same precision and scale; every table column appears on its entity; primary keys match.
 */
describe('entities match the migrated database', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await startApp();
  });
  afterAll(() => ctx.close());

  /** TypeORM column type → PostgreSQL's udt_name. */
  const UDT: Record<string, string> = {
    uuid: 'uuid', text: 'text', numeric: 'numeric', decimal: 'numeric', integer: 'int4', int: 'int4', int4: 'int4', smallint: 'int2', int2: 'int2',
    bigint: 'int8', int8: 'int8', boolean: 'bool', bool: 'bool', timestamptz: 'timestamptz', 'timestamp with time zone': 'timestamptz',
    date: 'date', json: 'json', jsonb: 'jsonb', char: 'bpchar', character: 'bpchar', varchar: 'varchar', 'character varying': 'varchar',
  };
  const typeName = (t: unknown) => (typeof t === 'function' ? ({ String: 'text', Number: 'integer', Boolean: 'boolean', Date: 'timestamptz' } as Record<string, string>)[t.name] ?? t.name : String(t));

  it('has an entity for every table, and each entity column in its table with its type and nullability (and the reverse)', async () => {
    const db: DataSource = ctx.db;
    const columns: Array<{ table_name: string; column_name: string; udt_name: string; is_nullable: string; numeric_precision: number | null; numeric_scale: number | null }> =
      await db.query(`SELECT table_name, column_name, udt_name, is_nullable, numeric_precision, numeric_scale FROM information_schema.columns WHERE table_schema = 'public'`);
    const keys: Array<{ table_name: string; cols: string[] }> = await db.query(
      `SELECT tc.table_name, array_agg(k.column_name::text ORDER BY k.ordinal_position) AS cols
         FROM information_schema.table_constraints tc
         JOIN information_schema.key_column_usage k ON k.constraint_name = tc.constraint_name AND k.table_name = tc.table_name AND k.table_schema = tc.table_schema
        WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = 'public' GROUP BY tc.table_name`,
    );
    const tables = new Map<string, typeof columns>();
    for (const c of columns) tables.set(c.table_name, [...(tables.get(c.table_name) ?? []), c]);
    tables.delete('schema_migrations'); // the migration runner's own table

    const problems: string[] = [];
    const mapped = new Set<string>();
    for (const meta of db.entityMetadatas) {
      const table = meta.tableName;
      mapped.add(table);
      const actual = tables.get(table);
      if (!actual) {
        problems.push(`${meta.name}: table ${table} does not exist`);
        continue;
      }
      const own = new Set<string>();
      for (const col of meta.columns) {
        own.add(col.databaseName);
        const db = actual.find((c) => c.column_name === col.databaseName);
        const where = `${meta.name}.${col.propertyPath} (${table}.${col.databaseName})`;
        if (!db) {
          problems.push(`${where}: no such column`);
          continue;
        }
        const expected = `${col.isArray ? '_' : ''}${UDT[typeName(col.type)] ?? `?${typeName(col.type)}`}`;
        if (expected !== db.udt_name) problems.push(`${where}: entity type ${typeName(col.type)}${col.isArray ? '[]' : ''}, table type ${db.udt_name}`);
        if (col.isNullable !== (db.is_nullable === 'YES')) problems.push(`${where}: entity ${col.isNullable ? 'nullable' : 'not null'}, table ${db.is_nullable === 'YES' ? 'nullable' : 'not null'}`);
        if (db.udt_name === 'numeric' && col.precision != null && (col.precision !== db.numeric_precision || (col.scale ?? 0) !== db.numeric_scale))
          problems.push(`${where}: entity numeric(${col.precision},${col.scale}), table numeric(${db.numeric_precision},${db.numeric_scale})`);
      }
      for (const c of actual) if (!own.has(c.column_name)) problems.push(`${meta.name}: ${table}.${c.column_name} has no property`);
      const pk = keys.find((k) => k.table_name === table)?.cols ?? [];
      const entityPk = meta.primaryColumns.map((c) => c.databaseName);
      if ([...entityPk].sort().join() !== [...pk].sort().join()) problems.push(`${meta.name}: primary key (${entityPk}) but the table's is (${pk})`);
    }
    for (const table of tables.keys()) if (!mapped.has(table)) problems.push(`table ${table} has no entity`);
    expect(problems).toEqual([]);
    expect(mapped.size).toBe(tables.size);
  });

  it('loads a document with its lines through the relation', async () => {
    // A sales order and its lines, read with TypeORM's relation (composite tenant keys on both sides).
    const db: DataSource = ctx.db;
    const order = db.entityMetadatas.find((m) => m.tableName === 'sales_orders')!;
    const relation = order.relations.find((r) => r.propertyName === 'lines')!;
    expect(relation.inverseEntityMetadata.tableName).toBe('sales_order_lines');
    expect(relation.inverseRelation!.joinColumns.map((c) => c.databaseName).sort()).toEqual(['sales_order_id', 'tenant_id']);
  });
});
