import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The tenant's attempts in flight (pending, with a lease) by their own small index. A claim counts them
 * to keep the tenant within WEBHOOK_TENANT_CONCURRENCY; through `webhook_deliveries_due` that count read
 * every pending attempt of the tenant, so a backlog (a receiver slower than the postings) made each claim
 * slower, and the backlog grew further. Leases are cleared when an outcome is recorded: this index holds
 * only the attempts being made (and leases run out by a process that died).
 */
export class WebhookLeases1763780000014 implements MigrationInterface {
  name = 'WebhookLeases1763780000014';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (tenant_id, locked_until) WHERE status = 'pending' AND locked_until IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_deliveries_leased`);
  }
}
