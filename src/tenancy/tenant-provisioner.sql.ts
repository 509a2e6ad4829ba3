import type { EntityManager } from 'typeorm';
import { Sql, sql } from '../database/sql';

/** How provisioning sends a statement: its text and parameters (an EntityManager's or a pg client's query). */
export type RunStatement = (text: string, params: unknown[]) => Promise<unknown>;

/** `m`'s query, as a RunStatement (in its transaction). */
export const inManager =
  (m: EntityManager): RunStatement =>
  (text, params) =>
    m.query(text, params);

/** Sends `statement` with `run`. */
export const send = (run: RunStatement, statement: Sql) => run(statement.text, statement.values);

/** The tenant row, unless it exists (the gate of provisioning): returns its id if inserted. */
export const insertTenant = (tenantId: string) => sql`INSERT INTO tenants (tenant_id) VALUES (${tenantId}) ON CONFLICT DO NOTHING RETURNING tenant_id`;

/** The tenant's units of measure (`uoms`: a JSON array of {code, name, decimals}). */
export const insertUoms = (tenantId: string, uoms: string) => sql`INSERT INTO uoms (tenant_id, code, name, decimals)
     SELECT ${tenantId}, u.code, u.name, u.decimals FROM jsonb_to_recordset(${uoms}::jsonb) AS u(code text, name text, decimals int)
     ON CONFLICT DO NOTHING`;

/** The tenant's stock statuses (`statuses`: a JSON array of {code, name, is_available}). */
export const insertStatuses = (tenantId: string, statuses: string) => sql`INSERT INTO stock_statuses (tenant_id, code, name, is_available)
     SELECT ${tenantId}, s.code, s.name, s.is_available FROM jsonb_to_recordset(${statuses}::jsonb) AS s(code text, name text, is_available boolean)
     ON CONFLICT DO NOTHING`;
