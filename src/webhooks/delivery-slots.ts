const NONE: ReadonlyMap<string, number> = new Map();

/**
 * This process's delivery slots: attempts in flight (retries, and the senders of the feeds it is sending)
 * in all, per tenant and per webhook of a tenant, within the process's bound (`max`) and each tenant's
 * (`tenantMax`); the feeds' senders also per tenant by webhook, since no lease rows count them.
 */
export class DeliverySlots {
  private inFlight = 0;
  private readonly perTenant = new Map<string, number>();
  private readonly perWebhook = new Map<string, number>();
  private readonly feedSenders = new Map<string, Map<string, number>>();

  constructor(
    readonly max: number,
    readonly tenantMax: number,
  ) {}

  get used(): number {
    return this.inFlight;
  }

  free(): number {
    return this.max - this.inFlight;
  }

  /** Most of its tenant's slots one webhook holds: all but one, so one slow receiver leaves its tenant's others a slot. */
  get webhookMax(): number {
    return Math.max(1, this.tenantMax - 1);
  }

  /** The tenant's slots not in use in this process. */
  tenantRoom(tenantId: string): number {
    return this.tenantMax - (this.perTenant.get(tenantId) ?? 0);
  }

  /** The webhook's slots not in use in this process. */
  webhookRoom(tenantId: string, webhookId: string): number {
    return this.webhookMax - (this.perWebhook.get(`${tenantId}:${webhookId}`) ?? 0);
  }

  /** The tenant's webhooks whose feed this process is sending, with their senders. */
  feedsOf(tenantId: string): ReadonlyMap<string, number> {
    return this.feedSenders.get(tenantId) ?? NONE;
  }

  take(tenantId: string, webhookId: string, n: number, feed = false): void {
    this.inFlight += n;
    add(this.perTenant, tenantId, n);
    add(this.perWebhook, `${tenantId}:${webhookId}`, n);
    if (feed) this.countFeedSenders(tenantId, webhookId, n);
  }

  /** Gives slots back; returns the tenant's attempts still in flight. */
  give(tenantId: string, webhookId: string, n: number, feed = false): number {
    this.inFlight -= n;
    add(this.perWebhook, `${tenantId}:${webhookId}`, -n);
    if (feed) this.countFeedSenders(tenantId, webhookId, -n);
    return add(this.perTenant, tenantId, -n);
  }

  private countFeedSenders(tenantId: string, webhookId: string, n: number): void {
    const byWebhook = this.feedSenders.get(tenantId) ?? new Map<string, number>();
    add(byWebhook, webhookId, n);
    if (byWebhook.size) this.feedSenders.set(tenantId, byWebhook);
    else this.feedSenders.delete(tenantId);
  }
}

/** Adds `n` to the count under `key` (dropping it at zero); returns the new count. */
function add(counts: Map<string, number>, key: string, n: number): number {
  const next = (counts.get(key) ?? 0) + n;
  if (next > 0) counts.set(key, next);
  else counts.delete(key);
  return Math.max(0, next);
}
