import { MigrationInterface, QueryRunner } from 'typeorm';
import { AUDIT_COLUMNS, tenantPolicy } from './lib/rls';

/** Items (identifiers, attributes, UOM conversions), facilities, location trees. */
export class Catalog1763780000001 implements MigrationInterface {
  name = 'Catalog1763780000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE items (
        tenant_id uuid NOT NULL REFERENCES tenants (tenant_id),
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        item_no text NOT NULL CHECK (length(item_no) BETWEEN 1 AND 64),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        description text,
        item_kind text NOT NULL DEFAULT 'stock' CHECK (item_kind IN ('stock', 'non_stock', 'service')),
        base_uom_id uuid NOT NULL,
        lot_tracking text NOT NULL DEFAULT 'none' CHECK (lot_tracking IN ('none', 'required')),
        serial_tracking text NOT NULL DEFAULT 'none' CHECK (serial_tracking IN ('none', 'required')),
        expiry_tracking text NOT NULL DEFAULT 'none' CHECK (expiry_tracking IN ('none', 'required')),
        is_active boolean NOT NULL DEFAULT true,
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, item_no),
        FOREIGN KEY (tenant_id, base_uom_id) REFERENCES uoms (tenant_id, id),
        CONSTRAINT items_expiry_needs_lot CHECK (expiry_tracking = 'none' OR lot_tracking = 'required')
      );
      -- q search: case-insensitive substring on name and item number, trigram-indexed.
      CREATE INDEX items_name_trgm ON items USING gin (name gin_trgm_ops);
      CREATE INDEX items_item_no_trgm ON items USING gin (item_no gin_trgm_ops);
      CREATE INDEX items_list ON items (tenant_id, created_at DESC, id DESC);
      ${tenantPolicy('items')}

      CREATE TABLE item_identifiers (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL,
        type text NOT NULL CHECK (type IN ('gtin', 'upc', 'ean', 'sku', 'mpn', 'supplier_sku', 'other')),
        value text NOT NULL CHECK (length(value) BETWEEN 1 AND 100),
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, type, value),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id) ON DELETE CASCADE
      );
      CREATE INDEX item_identifiers_item ON item_identifiers (tenant_id, item_id);
      ${tenantPolicy('item_identifiers')}

      CREATE TABLE item_attributes (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
        value text NOT NULL,
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, item_id, name),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id) ON DELETE CASCADE
      );
      ${tenantPolicy('item_attributes')}

      CREATE TABLE item_uom_conversions (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        item_id uuid NOT NULL,
        uom_id uuid NOT NULL,
        factor numeric(20, 6) NOT NULL CHECK (factor > 0),
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, item_id, uom_id),
        FOREIGN KEY (tenant_id, item_id) REFERENCES items (tenant_id, id) ON DELETE CASCADE,
        FOREIGN KEY (tenant_id, uom_id) REFERENCES uoms (tenant_id, id)
      );
      ${tenantPolicy('item_uom_conversions')}

      CREATE TABLE facilities (
        tenant_id uuid NOT NULL REFERENCES tenants (tenant_id),
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        code text NOT NULL CHECK (length(code) BETWEEN 1 AND 64),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        type text NOT NULL DEFAULT 'warehouse' CHECK (type IN ('warehouse', 'store', 'plant')),
        address text,
        is_active boolean NOT NULL DEFAULT true,
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, code)
      );
      CREATE INDEX facilities_list ON facilities (tenant_id, created_at DESC, id DESC);
      ${tenantPolicy('facilities')}

      CREATE TABLE locations (
        tenant_id uuid NOT NULL,
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        facility_id uuid NOT NULL,
        parent_id uuid,
        code text NOT NULL CHECK (length(code) BETWEEN 1 AND 64),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        type text NOT NULL DEFAULT 'bin'
          CHECK (type IN ('zone', 'aisle', 'rack', 'bin', 'receiving', 'shipping', 'production', 'staging')),
        path text NOT NULL,
        is_active boolean NOT NULL DEFAULT true,
        ${AUDIT_COLUMNS},
        PRIMARY KEY (tenant_id, id),
        UNIQUE (tenant_id, facility_id, code),
        -- lets other tables (and the parent link) require a location of a given facility
        UNIQUE (tenant_id, facility_id, id),
        FOREIGN KEY (tenant_id, facility_id) REFERENCES facilities (tenant_id, id),
        FOREIGN KEY (tenant_id, facility_id, parent_id) REFERENCES locations (tenant_id, facility_id, id)
      );
      ${tenantPolicy('locations')}
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE locations, facilities, item_uom_conversions, item_attributes, item_identifiers, items`);
  }
}
