import { MigrationInterface, QueryRunner } from 'typeorm';
import { APP_ROLE } from './lib/rls';

/**
 * Item search (`q` on name and item number) that uses its trigram indexes under row-level security.
 *
 * ILIKE is not a leakproof operator, so PostgreSQL never evaluates it in an index scan ahead of an RLS
 * policy: under RLS every search was a sequential scan (about a second at a million items). The search
 * runs instead in `item_search`, a SECURITY DEFINER function whose query applies exactly the policy's
 * predicate — the transaction's `app.tenant_id`, no tenant → no rows — and returns only item ids; the
 * caller joins them back to `items` under RLS as usual. The indexes lead with tenant_id (btree_gin),
 * so a search reads only the tenant's index entries.
 *
 * When the function's owner (the migration user) is a superuser or has BYPASSRLS, the index is used;
 * otherwise FORCE ROW LEVEL SECURITY still applies inside it and search stays correct, only slower.
 */
export class ItemSearch1763780000003 implements MigrationInterface {
  name = 'ItemSearch1763780000003';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE EXTENSION IF NOT EXISTS btree_gin;
      DROP INDEX items_name_trgm;
      DROP INDEX items_item_no_trgm;
      CREATE INDEX items_search_name ON items USING gin (tenant_id, name gin_trgm_ops);
      CREATE INDEX items_search_item_no ON items USING gin (tenant_id, item_no gin_trgm_ops);

      CREATE FUNCTION item_search(pattern text) RETURNS TABLE (id uuid)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
      AS $$
        SELECT i.id FROM items i
         WHERE i.tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid
           AND (i.name ILIKE pattern OR i.item_no ILIKE pattern)
      $$;
      REVOKE ALL ON FUNCTION item_search(text) FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION item_search(text) TO ${APP_ROLE};
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION item_search(text);
      DROP INDEX items_search_name;
      DROP INDEX items_search_item_no;
      CREATE INDEX items_name_trgm ON items USING gin (name gin_trgm_ops);
      CREATE INDEX items_item_no_trgm ON items USING gin (item_no gin_trgm_ops);
    `);
  }
}
