import { AppError } from '../common/errors';

interface Waiter {
  read: boolean;
  turn: () => void;
}

interface TenantPlaces {
  /** Units of work holding a place. */
  active: number;
  /** Of those, the writing ones. */
  writers: number;
  queue: Waiter[];
}

/**
 * Fairness between tenants: at most `max` units of work of one tenant hold a database connection at
 * once. The others of that tenant wait their turn (first come, first served) for at most `waitMs`, then
 * answer 503 — so a tenant whose requests are stuck (a held lock, slow searches) fills only its share of
 * the pool, and every other tenant keeps being served.
 *
 * Within a tenant, one of its places is kept for reads (when `max` > 1): writing units of work hold at most
 * `max − 1` at once, so a read (a GET, the event feed) never queues behind a tenant's burst of postings,
 * each of which keeps its connection until its COMMIT is flushed. A read waits only for the reads ahead of
 * it; writes keep their order among themselves.
 */
export class TenantGate {
  private readonly tenants = new Map<string, TenantPlaces>();

  constructor(
    private readonly max: number,
    private readonly waitMs: number,
  ) {}

  /**
   * A place for a unit of work of `tenant` (`read`: a read-only one): the function that gives it back, at
   * once when one is free (no promise on the common path), else a promise of it once it is this request's
   * turn (503 after `waitMs`).
   */
  enter(tenant: string, read = false): (() => void) | Promise<() => void> {
    let t = this.tenants.get(tenant);
    if (!t) this.tenants.set(tenant, (t = { active: 0, writers: 0, queue: [] }));
    const entry = t;
    // No waiter fits (every leave hands places to the waiters that do), so one that fits now passes no one
    // who could have had the place.
    if (this.fits(entry, read)) return this.take(tenant, entry, read);
    return new Promise<() => void>((resolve, reject) => {
      const waiter: Waiter = {
        read,
        turn: () => {
          clearTimeout(timer);
          resolve(this.take(tenant, entry, read));
        },
      };
      const timer = setTimeout(() => {
        entry.queue.splice(entry.queue.indexOf(waiter), 1);
        reject(new AppError(503, 'service_unavailable', `Too many requests of this tenant are waiting for the database; retry shortly`));
      }, this.waitMs);
      entry.queue.push(waiter);
    });
  }

  /** Whether a unit of work (a read or a write) may take a place now. */
  private fits(entry: TenantPlaces, read: boolean): boolean {
    return entry.active < this.max && (read || this.max === 1 || entry.writers < this.max - 1);
  }

  private take(tenant: string, entry: TenantPlaces, read: boolean): () => void {
    entry.active++;
    if (!read) entry.writers++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      entry.active--;
      if (!read) entry.writers--;
      // The freed place goes to the first waiter that fits (a read may pass writes waiting for a write place).
      for (let i = 0; i < entry.queue.length; ) {
        const w = entry.queue[i];
        if (!this.fits(entry, w.read)) {
          i++;
          continue;
        }
        entry.queue.splice(i, 1);
        w.turn(); // takes the place synchronously
      }
      if (entry.active === 0 && !entry.queue.length) this.tenants.delete(tenant);
    };
  }
}
