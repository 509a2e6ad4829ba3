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

  it('lets `max` units of one tenant in, queues the next in order, and never holds other tenants back', async () => {
    const gate = new TenantGate(2, 1000);
    const a1 = await gate.enter('a');
    const a2 = await gate.enter('a');
    const order: string[] = [];
    const a3 = Promise.resolve(gate.enter('a')).then((leave: () => void) => (order.push('a3'), leave));
    const a4 = Promise.resolve(gate.enter('a')).then((leave: () => void) => (order.push('a4'), leave));
    const b1 = await gate.enter('b'); // another tenant is not queued behind a

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
    const again = await gate.enter('a');
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
});
