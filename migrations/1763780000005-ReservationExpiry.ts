import { MigrationInterface, QueryRunner } from 'typeorm';
import { APP_ROLE } from './lib/rls';

/**
 * The reservation expiry job runs outside any request: it must find the tenants that have expired
 * reservations to release, across tenants, which row-level security hides from the app role. This
 * SECURITY DEFINER function returns only their ids (no row data); the job then releases each tenant's
 * reservations in a unit of work bound to that tenant, under RLS as usual.
 */
export class ReservationExpiry1763780000005 implements MigrationInterface {
  name = 'ReservationExpiry1763780000005';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION tenants_with_expired_reservations(max_tenants integer) RETURNS TABLE (tenant_id uuid)
        LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
      AS $$
        SELECT DISTINCT r.tenant_id FROM reservations r
         WHERE r.status IN ('open', 'allocated') AND r.expires_at <= now()
         LIMIT max_tenants
      $$;
      REVOKE ALL ON FUNCTION tenants_with_expired_reservations(integer) FROM PUBLIC;
      GRANT EXECUTE ON FUNCTION tenants_with_expired_reservations(integer) TO ${APP_ROLE};
      CREATE INDEX reservations_expiry_all ON reservations (expires_at) WHERE status IN ('open', 'allocated') AND expires_at IS NOT NULL;
    `);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      DROP INDEX reservations_expiry_all;
      DROP FUNCTION tenants_with_expired_reservations(integer);
    `);
  }
}
