import type { Exchange } from './delivery-jobs';
import { EarlyFailures, segmentRecords } from './attempt-records';
import type { AttemptRecord, SegmentEvent } from './webhooks.sql';

const event = (n: number): SegmentEvent => ({ txid: String(n), seq: '0', id: `e${n}`, type: 'stock.changed', occurred_at: new Date(0), body: `{"n":${n}}` });
const answered = (status: number | null): Exchange => ({ result: { status, body: '', retryAfter: null, error: status ? null : 'ECONNREFUSED' }, attemptedAt: new Date(), answeredAt: new Date() });
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("a segment's failures recorded early", () => {
  const events = [event(1), event(2), event(3)];

  it('records the failures that schedule a retry, once, a delay after the first; the segment then leaves them out', async () => {
    const writes: AttemptRecord[][] = [];
    const early = new EarlyFailures(events, 1, async (records) => (writes.push(records), true), 20);
    early.failed(0, answered(500));
    early.failed(2, answered(null));
    early.failed(1, answered(410)); // no retry: the segment's record has it
    expect(writes).toHaveLength(0);
    await tick(60);
    expect(writes).toHaveLength(1);
    expect(writes[0].map((r) => [r.eventId, r.attempt, r.status])).toEqual([['e1', 1, 'failed'], ['e1', 2, 'pending'], ['e3', 1, 'failed'], ['e3', 2, 'pending']]);
    const skip = await early.end();
    expect([...skip].sort()).toEqual([0, 2]);
    const { records } = segmentRecords(events, [answered(500), answered(410), answered(null)], 1, skip);
    expect(records.map((r) => [r.eventId, r.attempt, r.status])).toEqual([['e2', 1, 'failed']]);
  });

  it('records nothing once the segment has ended, and leaves to it what could not be recorded', async () => {
    const writes: AttemptRecord[][] = [];
    const ended = new EarlyFailures(events, 1, async (records) => (writes.push(records), true), 20);
    ended.failed(0, answered(500));
    expect([...(await ended.end())]).toEqual([]);
    await tick(40);
    expect(writes).toHaveLength(0);
    const refused = new EarlyFailures(events, 1, async () => false, 5);
    refused.failed(1, answered(503));
    await tick(30);
    expect([...(await refused.end())]).toEqual([]);
    const failing = new EarlyFailures(events, 1, () => Promise.reject(new Error('connection lost')), 5);
    failing.failed(1, answered(503));
    await tick(30);
    expect([...(await failing.end())]).toEqual([]);
  });

  it('waits for a record in progress when the segment ends', async () => {
    let finish!: (ok: boolean) => void;
    const early = new EarlyFailures(events, 1, () => new Promise<boolean>((r) => (finish = r)), 5);
    early.failed(1, answered(500));
    await tick(20);
    const ending = early.end();
    finish(true);
    expect([...(await ending)]).toEqual([1]);
  });
});
