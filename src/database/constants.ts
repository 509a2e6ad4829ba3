/**
 * The role every request's queries run under (created by the first migration):
 * NOLOGIN, NOSUPERUSER, NOBYPASSRLS, owns nothing, so row-level security always applies to it,
 * even when DATABASE_URL names a superuser. Migrations run as the connecting (owner) user.
 */
export const APP_ROLE = 'inventory_app';

/** SQLSTATEs after which a whole unit of work is retried. */
export const RETRYABLE_SQLSTATES = new Set(['40P01', '40001']);
