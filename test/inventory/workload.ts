import type { Response } from 'supertest';
import type { InventoryFixture as Fixture } from '../support/fixtures';

/** What a workload needs of a client: the tenant's post (possibly against different service processes). */
export interface Client {
  post(url: string, body?: object): PromiseLike<Response>;
}

/** `{201: 25, 409: 15}` */
export function statusCounts(responses: Array<{ status: number }>): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

/** A small deterministic PRNG (mulberry32), so a failing run can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Rounds of parallel requests on a few hot items: adjustments in and out, reservations, allocations,
 * releases and fulfilments, spread over the given clients. Conflicts (409) are expected; server
 * errors are collected for the caller to assert there are none.
 */
export async function mixedWorkload(clients: Client[], f: Fixture, opts: { rounds: number; perRound: number; seed?: number }) {
  const random = prng(opts.seed ?? 20261122);
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
  const qty = () => 1 + Math.floor(random() * 4);
  const reservations: string[] = [];
  /** Reservations an allocate succeeded on: what a fulfil is aimed at, so fulfilments can succeed. */
  const allocated: string[] = [];
  const serverErrors: Array<{ op: string; status: number; body: unknown }> = [];
  /** Answers a client could not expect: anything but a success or the op's documented refusal. */
  const unexpected: Array<{ op: string; status: number; body: unknown }> = [];
  const byOp: Record<string, Record<number, number>> = {};
  let succeeded = 0;
  let sent = 0;

  // Some stock to fight over: every seeding adjustment must be accepted, or the fight is not fair.
  for (const item of f.items) {
    for (const location of f.locations) {
      const res = await clients[0].post('/v1/inventory/adjustments', { itemId: item.id, locationId: location.id, qtyDelta: 20, reason: 'seed' });
      if (res.status !== 201) throw new Error(`seeding adjustment answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
  }

  for (let round = 0; round < opts.rounds; round++) {
    const ops: Array<{ op: string; id?: string; run: () => PromiseLike<Response> }> = [];
    for (let i = 0; i < opts.perRound; i++) {
      const client = clients[sent++ % clients.length];
      const item = pick(f.items);
      const location = pick(f.locations);
      const r = random();
      if (r < 0.2) {
        ops.push({ op: 'adjust+', run: () => client.post('/v1/inventory/adjustments', { itemId: item.id, locationId: location.id, qtyDelta: qty(), reason: 'in' }) });
      } else if (r < 0.45) {
        ops.push({ op: 'adjust-', run: () => client.post('/v1/inventory/adjustments', { itemId: item.id, locationId: location.id, qtyDelta: -qty(), reason: 'out' }) });
      } else if (r < 0.7 || !reservations.length) {
        ops.push({ op: 'reserve', run: () => client.post('/v1/inventory/reservations', { itemId: item.id, facilityId: f.facility.id, qty: qty() }) });
      } else {
        const action = pick(['allocate', 'allocate', 'fulfill', 'release', 'cancel']);
        const id = action === 'fulfill' && allocated.length ? pick(allocated) : pick(reservations);
        ops.push({ op: action, id, run: () => client.post(`/v1/inventory/reservations/${id}/${action}`) });
      }
    }
    const results = await Promise.all(ops.map((o) => o.run()));
    results.forEach((res, i) => {
      const op = ops[i].op;
      (byOp[op] ??= {})[res.status] = (byOp[op][res.status] ?? 0) + 1;
      if (res.status >= 500) serverErrors.push({ op, status: res.status, body: res.body });
      // adding stock is never refused; taking stock, reserving and reservation actions may lose with a 409
      const expected = op === 'adjust+' ? [201] : op === 'adjust-' || op === 'reserve' ? [201, 409] : [200, 409];
      if (!expected.includes(res.status)) unexpected.push({ op, status: res.status, body: res.body });
      if (res.status < 300) succeeded++;
      if (ops[i].op === 'reserve' && res.status === 201) reservations.push(res.body.data.id);
      if (ops[i].op === 'allocate' && res.status === 200) allocated.push(res.body.data.id);
      // a reservation released, cancelled or fulfilled is no longer one to fulfill (a fulfill then can only lose)
      if (['release', 'cancel', 'fulfill'].includes(ops[i].op) && res.status === 200) {
        for (let at = allocated.indexOf(ops[i].id!); at >= 0; at = allocated.indexOf(ops[i].id!)) allocated.splice(at, 1);
      }
    });
  }
  return { succeeded, serverErrors, unexpected, byOp };
}

/**
 * What every mixed workload must show: no server error, no answer outside each op's documented ones,
 * and real work done — at least `minSucceeded` successes, with every kind of op succeeding at least once.
 */
export function expectWorkloadDone(result: Awaited<ReturnType<typeof mixedWorkload>>, minSucceeded: number): void {
  expect(result.serverErrors).toEqual([]);
  expect(result.unexpected).toEqual([]);
  expect(result.succeeded).toBeGreaterThanOrEqual(minSucceeded);
  const ops = ['adjust+', 'adjust-', 'reserve', 'allocate', 'fulfill', 'release', 'cancel'];
  const won = Object.fromEntries(ops.map((op) => [op, Object.entries(result.byOp[op] ?? {}).some(([status, n]) => Number(status) < 300 && n > 0)]));
  expect(won).toEqual(Object.fromEntries(ops.map((op) => [op, true])));
}
