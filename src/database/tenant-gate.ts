import { AppError } from '../common/errors';

/**
 * Fairness between tenants: at most `max` units of work of one tenant hold a database connection at
 * once. The others of that tenant wait their turn (first come, first served) for at most `waitMs`, then
 * answer 503 — so a tenant whose requests are stuck (a held lock, slow searches) fills only its share of
 * the pool, and every other tenant keeps being served.
 */
export class TenantGate {
  private readonly tenants = new Map<string, { active: number; queue: Array<() => void> }>();

  constructor(
    private readonly max: number,
    private readonly waitMs: number,
  ) {}

  /**
   * A place for `tenant`: the function that gives it back, at once when one is free (no promise on the
   * common path), else a promise of it once it is this request's turn (503 after `waitMs`).
   */
  enter(tenant: string): (() => void) | Promise<() => void> {
    let t = this.tenants.get(tenant);
    if (!t) this.tenants.set(tenant, (t = { active: 0, queue: [] }));
    const entry = t;
    if (entry.active < this.max) {
      entry.active++;
      return this.leave(tenant, entry);
    }
    return new Promise<() => void>((resolve, reject) => {
      const turn = () => {
        clearTimeout(timer);
        resolve(this.leave(tenant, entry));
      };
      const timer = setTimeout(() => {
        entry.queue.splice(entry.queue.indexOf(turn), 1);
        reject(new AppError(503, 'service_unavailable', `Too many requests of this tenant are waiting for the database; retry shortly`));
      }, this.waitMs);
      entry.queue.push(turn);
    });
  }

  private leave(tenant: string, entry: { active: number; queue: Array<() => void> }): () => void {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = entry.queue.shift();
      // The place passes straight to the next waiter (active stays the same), or is freed.
      if (next) next();
      else if (--entry.active === 0) this.tenants.delete(tenant);
    };
  }
}
