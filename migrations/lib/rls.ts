/**
 * Shared SQL for tenant tables. Every tenant table gets row-level security, forced, with one policy:
 * a row is visible and writable only when its tenant_id is the transaction's `app.tenant_id`
 * (no tenant set → no rows). The service's queries run as the role below, which RLS applies to.
 */
export const APP_ROLE = 'inventory_app';

export const tenantPolicy = (table: string, privileges = 'SELECT, INSERT, UPDATE, DELETE') => `
  ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY;
  ALTER TABLE ${table} FORCE ROW LEVEL SECURITY;
  CREATE POLICY tenant_isolation ON ${table}
    USING (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid)
    WITH CHECK (tenant_id = NULLIF(current_setting('app.tenant_id', true), '')::uuid);
  GRANT ${privileges} ON ${table} TO ${APP_ROLE};
`;

/** Standard audit columns of a mutable document. */
export const AUDIT_COLUMNS = `
  version integer NOT NULL DEFAULT 1,
  created_by text NOT NULL,
  updated_by text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()`;
