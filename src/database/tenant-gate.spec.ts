import { TenantGate } from './tenant-gate';

const tick = () => new Promise((r) => setImmediate(r));

describe('TenantGate', () => {
  it('gives a free place at once (no promise); a full tenant\'s request gets a promise of one', async () => {
    const gate = new TenantGate(1, 1000);
    const first = gate.enter('a');
    expect(typeof first).toBe('function');
    const second = gate.enter('a');
    expect(second).toBeInstanceOf(Promise);
    (first as () => void)();
    const leave = await second;
    expect(typeof leave).toBe('function');
    leave();
  });

  it('lets `max` reads of one tenant in, queues the next in order, and never holds other tenants back', async () => {
    const gate = new TenantGate(2, 1000);
    const a1 = await gate.enter('a', true);
    const a2 = await gate.enter('a', true);
    const order: string[] = [];
    const a3 = Promise.resolve(gate.enter('a', true)).then((leave: () => void) => (order.push('a3'), leave));
    const a4 = Promise.resolve(gate.enter('a', true)).then((leave: () => void) => (order.push('a4'), leave));
    const b1 = await gate.enter('b', true); // another tenant is not queued behind a

    await tick();
    expect(order).toEqual([]);
    a1();
    await tick();
    expect(order).toEqual(['a3']);
    a2();
    a2(); // leaving twice gives back one place only
    await tick();
    expect(order).toEqual(['a3', 'a4']);
    (await a3)();
    (await a4)();
    b1();
    const again = await gate.enter('a', true);
    again();
  });

  it('a waiter that gets no place within the wait answers 503 and leaves the queue', async () => {
    const gate = new TenantGate(1, 50);
    const held = await gate.enter('a');
    await expect(Promise.resolve(gate.enter('a'))).rejects.toMatchObject({ status: 503, code: 'service_unavailable' });
    held();
    const next = await gate.enter('a'); // the timed-out waiter did not take the freed place
    next();
  });

  it('keeps one of a tenant\'s places for reads: writes hold at most max − 1, a read passes queued writes, writes keep their order', async () => {
    const gate = new TenantGate(3, 1000);
    const w1 = await gate.enter('a');
    const w2 = await gate.enter('a');
    const order: string[] = [];
    const queued = (name: string, read: boolean) => Promise.resolve(gate.enter('a', read)).then((leave: () => void) => (order.push(name), leave));
    const w3 = queued('w3', false); // a third write waits: one place stays for reads
    const w4 = queued('w4', false);
    await tick();
    expect(order).toEqual([]);
    const r1 = gate.enter('a', true); // a read takes the kept place at once, past the waiting writes
    expect(typeof r1).toBe('function');
    const r2 = queued('r2', true); // all 3 places taken: the next read waits too
    await tick();
    expect(order).toEqual([]);
    (r1 as () => void)(); // the freed read place: to the read (the writes are still at max − 1)
    await tick();
    expect(order).toEqual(['r2']);
    w1(); // a write place: to the first waiting write
    await tick();
    expect(order).toEqual(['r2', 'w3']);
    (await r2)();
    await tick();
    expect(order).toEqual(['r2', 'w3']); // still 2 writes in: w4 waits for a write to leave
    w2();
    await tick();
    expect(order).toEqual(['r2', 'w3', 'w4']);
    (await w3)();
    (await w4)();
  });

  it('with one place per tenant, reads and writes share it in order', async () => {
    const gate = new TenantGate(1, 1000);
    const w1 = await gate.enter('a');
    const order: string[] = [];
    const w2 = Promise.resolve(gate.enter('a')).then((leave: () => void) => (order.push('w2'), leave));
    const r1 = Promise.resolve(gate.enter('a', true)).then((leave: () => void) => (order.push('r1'), leave));
    w1();
    await tick();
    expect(order).toEqual(['w2']);
    (await w2)();
    await tick();
    expect(order).toEqual(['w2', 'r1']);
    (await r1)();
  });
});
