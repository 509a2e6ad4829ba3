import type { ResolvedLine } from './posting-lines';
import type { LineRow, TransactionRow } from './views';

/** A direct posting's row as its statement returns it (DirectPostings, direct.sql.ts). */
export type DirectRow = TransactionRow & { item_id: string; location_id: string; status_id: string };

/** A direct posting on its way: what its statement writes. `turn`: set while it waits in a batch queue. */
export interface Member {
  line: ResolvedLine;
  qty: string;
  head: Header;
  lineRow: LineRow;
  view: false | (() => object);
  turn?: { resolve(turn: Turn): void; reject(err: unknown): void };
}
export type Header = { id: string; type: string; postedBy: string; reason: string | null; sourceType: string | null; sourceId: string | null };
/** What a queued member is told: lead this batch (it is the first of them), or here is your committed row. */
export type Turn = { lead: Member[] } | { row: DirectRow };

/**
 * Group commit of a tenant's direct postings, per process. One tenant's postings all take its TX number
 * row, which stays locked through each COMMIT's flush: one at a time, each paid a WAL flush of its own.
 * Here a posting that arrives while another of its tenant is in flight waits in the tenant's queue; when
 * the batch in flight has its statement's answer (its COMMIT still flushing), the queue (up to `max`)
 * becomes the next batch, led by its first member's unit of work: one statement, one range of numbers
 * (`last_value + k`, taken last, after every balance), one COMMIT and one flush for all of them. Each
 * member keeps its own answer; the batch is all or nothing, and when it cannot be written whole each
 * member goes the full way on its own (its exact answer, its error). Numbers stay gap-free and in commit
 * order: a range is taken under the row lock and committed with its postings.
 */
export class PostingBatches {
  /** Tenants with a posting in flight, and who waits for the next batch. */
  private readonly tenants = new Map<string, Member[]>();
  /** Members waiting, all tenants. */
  private waiting = 0;

  constructor(
    private readonly max: number,
    /** Told how many members wait, whenever that changes. */
    private readonly onWaiting: (n: number) => void = () => undefined,
  ) {}

  /** Resolves at once with `{ lead: [member] }` when nothing of the tenant is in flight; else when the member's turn comes. */
  join(tenant: string, member: Member): Promise<Turn> {
    const queue = this.tenants.get(tenant);
    if (!queue) {
      this.tenants.set(tenant, []);
      return Promise.resolve({ lead: [member] });
    }
    return new Promise<Turn>((resolve, reject) => {
      member.turn = { resolve, reject };
      queue.push(member);
      this.onWaiting(++this.waiting);
    });
  }

  /** The batch in flight has its answer: the tenant's next batch (if any waits) goes out. */
  next(tenant: string): void {
    const queue = this.tenants.get(tenant);
    if (!queue) return;
    if (!queue.length) {
      this.tenants.delete(tenant);
      return;
    }
    const batch = queue.splice(0, this.max);
    this.waiting -= batch.length;
    this.onWaiting(this.waiting);
    batch[0].turn!.resolve({ lead: batch });
  }
}
