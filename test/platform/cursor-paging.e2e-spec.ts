import { startApp, Tenant, TestContext } from '../support/app';
import { adjust, newCustomer, newItem, newSupplier, recordsOfEveryKind, routeWithIds } from '../support/fixtures';

type Row = Record<string, unknown>;
type Envelope = { data: Row[]; count: number; limit: number; offset: number; nextCursor: string | null };
type Get = { parameters?: Array<{ in: string; name: string }>; responses: Record<string, { content?: Record<string, { schema: { required?: string[] } }> }> };
type Doc = { paths: Record<string, Record<string, Get>> };

/** The list routes of the OpenAPI description: GETs whose answer is a page (it requires `nextCursor`). */
const listRoutes = (doc: Doc) =>
  Object.entries(doc.paths).filter(([, ops]) => ops.get?.responses['200']?.content?.['application/json']?.schema.required?.includes('nextCursor'));
const takes = (op: Get, name: string) => !!op.parameters?.some((p) => p.in === 'query' && p.name === name);

const sep = (url: string) => (url.includes('?') ? '&' : '?');

async function getPage(t: Tenant, url: string): Promise<Envelope> {
  const res = await t.get(url);
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Every page of `url` by cursor, `limit` rows at a time; `between` runs after each page but the last. */
async function byCursor(t: Tenant, url: string, limit: number, between?: (n: number) => Promise<void>): Promise<{ rows: Row[]; pages: Envelope[] }> {
  const pages: Envelope[] = [];
  let next = `${url}${sep(url)}limit=${limit}`;
  for (;;) {
    const p = await getPage(t, next);
    pages.push(p);
    expect(p.data.length).toBeLessThanOrEqual(limit);
    if (p.nextCursor === null) break;
    expect(p.data).toHaveLength(limit);
    expect(pages.length).toBeLessThan(1000);
    if (between) await between(pages.length);
    next = `${url}${sep(url)}limit=${limit}&after=${encodeURIComponent(p.nextCursor)}`;
  }
  return { rows: pages.flatMap((p) => p.data), pages };
}

const refused = (body: { error: string; details?: Array<{ field: string }> }) => {
  expect(body.error).toBe('validation_failed');
  expect(body.details?.map((d) => d.field)).toContain('after');
};

describe('cursor paging on every paged list (CONTRACT §1)', () => {
  let ctx: TestContext;
  let t: Tenant;
  let ids: Record<string, string>;
  let routes: string[];
  let whole: string[];
  let f: Awaited<ReturnType<typeof recordsOfEveryKind>>;

  beforeAll(async () => {
    ctx = await startApp();
    f = await recordsOfEveryKind(ctx);
    t = f.t;
    ids = f.ids;
    // More rows in the lists: items, a lot-tracked item's stock next to stock without lots (balances
    // sort by a nullable lot number), serials, more parties.
    const ea = (await t.get('/v1/uoms?q=EA').expect(200)).body.data[0].id as string;
    const lotted = await newItem(t, ea, { lotTracking: 'required' });
    await adjust(t, { itemId: lotted.id, locationId: f.location.id, qtyDelta: 2, lotNo: 'LA' });
    await adjust(t, { itemId: lotted.id, locationId: f.location.id, qtyDelta: 3, lotNo: 'LB' });
    const serial = await newItem(t, ea, { serialTracking: 'required' });
    await adjust(t, { itemId: serial.id, locationId: f.location.id, qtyDelta: 3, serialNos: ['S-3', 'S-1', 'S-2'] });
    for (let i = 0; i < 3; i++) {
      const item = await newItem(t, ea);
      await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: i + 1 });
      await newSupplier(t);
      await newCustomer(t);
    }
    const lists = listRoutes((await ctx.http.get('/openapi.json').expect(200)).body);
    // A paged list takes limit, offset and after; a list of a record's few children answers all of them at once.
    // The event feed pages by its own cursor (always a string, commit order; test/events/feed): not a list of §1.
    routes = lists.filter(([path, ops]) => takes(ops.get, 'limit') && path !== '/v1/events').map(([path]) => path);
    whole = lists.filter(([, ops]) => !takes(ops.get, 'limit')).map(([path]) => path);
    for (const [path, ops] of lists) expect({ path, limit: takes(ops.get, 'limit'), after: takes(ops.get, 'after') }).toEqual({ path, limit: takes(ops.get, 'limit'), after: takes(ops.get, 'limit') });
  }, 120_000);
  afterAll(() => ctx.close());

  it('finds the paged lists in the description; a list answered whole has no next page', async () => {
    for (const path of whole) expect((await getPage(t, routeWithIds(path, ids))).nextCursor).toBeNull();
    expect(routes.length).toBeGreaterThanOrEqual(20);
    for (const path of ['/v1/items', '/v1/uoms', '/v1/inventory/transactions', '/v1/inventory/balances', '/v1/inventory/availability', '/v1/inventory/statuses'])
      expect(routes).toContain(path);
  });

  it('every list: the same rows in the same order as one big offset page, no repeats, nextCursor null at the end', async () => {
    const urls = routes.map((p) => routeWithIds(p, ids));
    // Both groupings of availability are lists of their own.
    urls.push('/v1/inventory/availability?groupBy=facility');
    let deep = 0;
    for (const url of urls) {
      const all = await getPage(t, `${url}${sep(url)}limit=500`);
      expect({ url, nextCursor: all.nextCursor }).toEqual({ url, nextCursor: null });
      for (const limit of [1, 2]) {
        const { rows, pages } = await byCursor(t, url, limit);
        expect({ url, limit, rows }).toEqual({ url, limit, rows: all.data });
        for (const p of pages) expect({ url, count: p.count, offset: p.offset }).toEqual({ url, count: all.count, offset: 0 });
        const keys = rows.map((r) => JSON.stringify(r));
        expect(new Set(keys).size).toBe(keys.length);
        if (pages.length > 2) deep++;
      }
      // An empty page and a last page that is exactly full both end with null.
      if (all.count > 0) expect((await getPage(t, `${url}${sep(url)}limit=${all.count}`)).nextCursor).toBeNull();
    }
    expect(deep).toBeGreaterThanOrEqual(10);
  }, 300_000);

  it('rows inserted while paging cause no repeat and no skip of the rows that existed when paging began', async () => {
    const before: Record<string, Row[]> = {};
    const lists = ['/v1/items', '/v1/uoms', '/v1/inventory/transactions', '/v1/facilities', '/v1/procurement/suppliers', '/v1/sales/customers', '/v1/inventory/lots'];
    for (const url of lists) before[url] = (await getPage(t, `${url}?limit=500`)).data;
    const ea = (await t.get('/v1/uoms?q=EA').expect(200)).body.data[0].id as string;
    let n = 0;
    const insert = async () => {
      n++;
      const item = await newItem(t, ea, { lotTracking: 'required' });
      await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: 1, lotNo: `NEW-${n}` });
      // Codes that sort first and last among the units.
      await t.post('/v1/uoms', { code: `A${String(n).padStart(3, '0')}`, name: 'new first', decimals: 0 }).expect(201);
      await t.post('/v1/uoms', { code: `ZZ${String(n).padStart(3, '0')}`, name: 'new last', decimals: 0 }).expect(201);
      await newSupplier(t);
      await newCustomer(t);
      await t.post('/v1/facilities', { code: `F-${n}-${Date.now() % 100000}`, name: 'new facility' }).expect(201);
    };
    for (const url of lists) {
      const { rows } = await byCursor(t, url, 2, insert);
      const existed = new Set(before[url].map((r) => r.id));
      const ids = rows.map((r) => r.id);
      expect({ url, repeats: ids.length - new Set(ids).size }).toEqual({ url, repeats: 0 });
      expect({ url, rows: rows.filter((r) => existed.has(r.id)).map((r) => r.id) }).toEqual({ url, rows: before[url].map((r) => r.id) });
    }
    expect(n).toBeGreaterThan(10);
  }, 300_000);

  it('refuses a cursor of another list, garbage, and after with offset > 0: 400 validation_failed naming after', async () => {
    const itemsCursor = (await getPage(t, '/v1/items?limit=1')).nextCursor!;
    const uomsCursor = (await getPage(t, '/v1/uoms?limit=1')).nextCursor!;
    const forged = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const garbage = [
      'not-a-cursor',
      '%%%',
      forged({ l: 'transactions', k: ['2026-13-45 99:00:00+00', 'x'], f: {} }),
      forged({ l: 'transactions', k: ['2026-01-01 00:00:00+00', 'not-a-uuid'], f: {} }),
      forged({ l: 'transactions', k: ['2026-01-01 00:00:00+00', '00000000-0000-4000-8000-000000000000'], f: { itemId: 'nope' } }),
      forged({ l: 'transactions', k: ['2026-01-01 00:00:00+00', '00000000-0000-4000-8000-000000000000'], f: { evil: 1 } }),
      forged({ l: 'balances', k: [null, null, null, null, null], f: {} }),
      forged([1, 2]),
      forged(null),
      'x'.repeat(4001),
    ];
    for (const path of routes) {
      const url = routeWithIds(path, ids);
      const other = url === '/v1/items' ? uomsCursor : itemsCursor;
      refused((await t.get(`${url}${sep(url)}after=${other}`).expect(400)).body);
      for (const g of garbage) refused((await t.get(`${url}${sep(url)}after=${encodeURIComponent(g)}`).expect(400)).body);
      const own = (await getPage(t, `${url}${sep(url)}limit=1`)).nextCursor;
      if (own) {
        refused((await t.get(`${url}${sep(url)}after=${own}&offset=1`).expect(400)).body);
        await getPage(t, `${url}${sep(url)}after=${own}&offset=0`);
      }
    }
  }, 300_000);

  describe('transactions', () => {
    it('pages the ledger newest first by cursor with its filters, which the cursor carries', async () => {
      const ea = (await t.get('/v1/uoms?q=EA').expect(200)).body.data[0].id as string;
      const item = await newItem(t, ea);
      for (let i = 0; i < 12; i++) await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: i + 1 });
      const url = `/v1/inventory/transactions?itemId=${item.id}`;
      const all = await getPage(t, `${url}&limit=500`);
      expect(all.count).toBe(12);
      const stamps = all.data.map((r) => `${r.postedAt as string}/${r.id as string}`);
      expect([...stamps].sort().reverse()).toEqual(stamps);

      const first = await getPage(t, `${url}&limit=5`);
      expect(first.data).toEqual(all.data.slice(0, 5));
      // `after` alone pages with the cursor's filters; the same filters sent along are accepted too.
      const alone = await getPage(t, `/v1/inventory/transactions?limit=5&after=${first.nextCursor}`);
      const along = await getPage(t, `${url}&limit=5&after=${first.nextCursor}`);
      expect(alone).toEqual(along);
      expect(alone.data).toEqual(all.data.slice(5, 10));
      expect(alone.count).toBe(12);
      const last = await getPage(t, `/v1/inventory/transactions?limit=5&after=${alone.nextCursor}`);
      expect(last.data).toEqual(all.data.slice(10));
      expect(last.nextCursor).toBeNull();
      // Other filters than the cursor's: refused.
      refused((await t.get(`/v1/inventory/transactions?itemId=${f.item.id}&after=${first.nextCursor}`).expect(400)).body);
      refused((await t.get(`/v1/inventory/transactions?type=adjustment&after=${first.nextCursor}`).expect(400)).body);

      // Postings committed while paging: newer than the first page, so they are not in the pages that follow.
      const second = await getPage(t, `${url}&limit=4`);
      for (let i = 0; i < 3; i++) await adjust(t, { itemId: item.id, locationId: f.location.id, qtyDelta: 1 });
      const seen = [...second.data];
      let cursor = second.nextCursor;
      while (cursor) {
        const p = await getPage(t, `/v1/inventory/transactions?limit=3&after=${cursor}`);
        seen.push(...p.data);
        cursor = p.nextCursor;
      }
      expect(seen.map((r) => r.id)).toEqual(all.data.map((r) => r.id));
    });

    it('pages the whole unfiltered ledger with the counter as count, and offset paging still answers', async () => {
      const all = await getPage(t, '/v1/inventory/transactions?limit=500');
      const { rows, pages } = await byCursor(t, '/v1/inventory/transactions', 7);
      expect(rows.map((r) => r.id)).toEqual(all.data.map((r) => r.id));
      for (const p of pages) expect(p.count).toBe(all.count);
      const byOffset = await getPage(t, '/v1/inventory/transactions?limit=7&offset=7');
      expect(byOffset.data).toEqual(pages[1].data);
      expect(byOffset.nextCursor).toBe(pages[1].nextCursor);
    });
  });
});
