import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A webhook's due attempts in due order, by their own index: a claim takes each webhook's share of its
 * tenant's slots from that webhook's own due attempts (claimDueAttempts), so a slow receiver's backlog
 * cannot fill the tenant's slots and stall the tenant's other webhooks. Pending rows only: delivered and
 * failed attempts are not in it.
 */
export class WebhookDueByWebhook1763780000018 implements MigrationInterface {
  name = 'WebhookDueByWebhook1763780000018';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX webhook_deliveries_due_by_webhook ON webhook_deliveries (tenant_id, webhook_id, next_attempt_at) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhook_deliveries_due_by_webhook`);
  }
}
