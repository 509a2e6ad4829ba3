import { MigrationInterface, QueryRunner } from 'typeorm';
import { APP_ROLE, AUDIT_COLUMNS, tenantPolicy } from './lib/rls';

const QTY = 'numeric(20,6)';

/**
 * Sales: customers and sales orders with their lines.
 *
 * Invariants held here: a line never ships more than it ordered (CHECK, the last word behind the
 * service's 409); one line per line number; a line's reservation is one of the tenant's reservations.
 * Free-text search (`q`) on customers and sales orders goes through SECURITY DEFINER functions that
 * apply the tenant policy's exact predicate, so the trigram indexes serve it under row-level security
 * (see migration ItemSearch for why ILIKE cannot otherwise use them).
 */
export class Sales1763780000007 implements MigrationInterface {
  name = 'Sales1763780000007';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE customers (
        tenant_id uuid NOT NULL REFERENCES tenants (tenant_id),
        id uuid NOT NULL,
        code text NOT NULL,
        name text NOT NULL,
        email text,
        phone text,
        address text,
        is_active boolean NOT NULL DEFAULT true,
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT customers_code_key UNIQUE (tenant_id, code)
      );
      CREATE INDEX customers_list ON customers (tenant_id, created_at DESC, id DESC);
      CREATE INDEX customers_search_code ON customers USING gin (tenant_id, code gin_trgm_ops);
      CREATE INDEX customers_search_name ON customers USING gin (tenant_id, name gin_trgm_ops);
      ${tenantPolicy('customers', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE sales_orders (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        order_no text NOT NULL,
        customer_id uuid NOT NULL,
        facility_id uuid NOT NULL,
        status text NOT NULL CHECK (status IN ('draft', 'open', 'partially_shipped', 'shipped', 'cancelled')),
        requested_date date,
        notes text,
        total_amount numeric NOT NULL DEFAULT 0,
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT sales_orders_order_no_key UNIQUE (tenant_id, order_no),
        FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id),
        FOREIGN KEY (tenant_id, facility_id) REFERENCES facilities (tenant_id, id)
      );
      CREATE INDEX sales_orders_list ON sales_orders (tenant_id, created_at DESC, id DESC);
      CREATE INDEX sales_orders_customer ON sales_orders (tenant_id, customer_id);
      CREATE INDEX sales_orders_facility ON sales_orders (tenant_id, facility_id);
      CREATE INDEX sales_orders_search_no ON sales_orders USING gin (tenant_id, order_no gin_trgm_ops);
      ${tenantPolicy('sales_orders', 'SELECT, INSERT, UPDATE')}

      CREATE TABLE sales_order_lines (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL,
        sales_order_id uuid NOT NULL,
        line_no integer NOT NULL CHECK (line_no > 0),
        item_id uuid NOT NULL,
        uom_id uuid NOT NULL,
        qty ${QTY} NOT NULL CHECK (qty > 0),
        unit_price numeric NOT NULL CHECK (unit_price >= 0),
        qty_shipped ${QTY} NOT NULL DEFAULT 0,
        -- the ordered quantity in the item's base unit (rounded up), and what shipped, in base units
        qty_base ${QTY} NOT NULL CHECK (qty_base > 0),
        qty_shipped_base ${QTY} NOT NULL DEFAULT 0 CHECK (qty_shipped_base >= 0),
        -- the line's hold at the order's facility (stock items, from open on)
        reservation_id uuid,
        PRIMARY KEY (tenant_id, id),
        CONSTRAINT sales_order_lines_no UNIQUE (tenant_id, sales_order_id, line_no),
        CONSTRAINT sales_order_lines_over_shipment CHECK (qty_shipped >= 0 AND qty_shipped <= qty),
        FOREIGN KEY (tenant_id, sales_order_id) REFERENCES sales_orders (tenant_id, id),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id),
        FOREIGN KEY (tenant_id, uom_id) REFERENCES uoms (tenant_id, id),
        FOREIGN KEY (tenant_id, reservation_id) REFERENCES reservations (tenant_id, id)
      );
      CREATE INDEX sales_order_lines_item ON sales_order_lines (tenant_id, item_id);
      ${tenantPolicy('sales_order_lines', 'SELECT, INSERT, UPDATE, DELETE')}

      CREATE FUNCTION customer_search(pattern text) RETURNS TABLE (id uuid)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
      AS $$
        SELECT c.id FROM customers c
         WHERE c.tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid
           AND (c.code ILIKE pattern OR c.name ILIKE pattern)
      $$;
      -- Orders whose number, or whose customer's name, matches.
      CREATE FUNCTION sales_order_search(pattern text) RETURNS TABLE (id uuid)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
      AS $$
        SELECT o.id FROM sales_orders o
         WHERE o.tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid AND o.order_no ILIKE pattern
        UNION
        SELECT o.id FROM sales_orders o
         WHERE o.tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid
           AND o.customer_id IN (SELECT c.id FROM customers c
                                  WHERE c.tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid AND c.name ILIKE pattern)
      $$;
      REVOKE ALL ON FUNCTION customer_search(text) FROM PUBLIC;
      REVOKE ALL ON FUNCTION sales_order_search(text) FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION customer_search(text) TO ${APP_ROLE};
      GRANT EXECUTE ON FUNCTION sales_order_search(text) TO ${APP_ROLE};
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP FUNCTION sales_order_search(text);
      DROP FUNCTION customer_search(text);
      DROP TABLE sales_order_lines, sales_orders, customers;
    `);
  }
}
