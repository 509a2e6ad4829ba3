import { existsSync } from 'node:fs';
import { newTenant, startApp, TestContext, PLATFORMS } from '../support/app';
import { nativeRequire } from '../support/dist';

type Page = {
  goto(url: string): Promise<unknown>;
  click(selector: string): Promise<void>;
  fill(selector: string, value: string): Promise<void>;
  locator(selector: string): { first(): { click(): Promise<void>; textContent(): Promise<string | null> }; waitFor(o?: object): Promise<void> };
  waitForSelector(selector: string, o?: object): Promise<unknown>;
};
type Browser = { newPage(): Promise<Page>; close(): Promise<void> };
const { chromium } = nativeRequire('playwright-core') as { chromium: { launch(o: object): Promise<Browser> } };

/** Debian's chromium (apt-get install chromium); .ci/run installs it when it can. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available) process.stdout.write(`docs-ui: skipped, no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)\n`);

/** The interactive docs in a real headless browser: authorize with a token, try GET /v1/items, see 200. */
(available ? describe : describe.skip).each(PLATFORMS)('/docs in headless Chromium on %s', (platform) => {
  let ctx: TestContext;
  let browser: Browser;
  beforeAll(async () => {
    ctx = await startApp({ HTTP_PLATFORM: platform });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      // Offline machine: no background networking, no component updates (their requests would be refused).
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
  });

  it('authorizes with a bearer token, runs GET /v1/items with "Try it out", and shows 200 with the tenant\'s item', async () => {
    const t = await newTenant(ctx, ['catalog:read', 'catalog:write']);
    const ea = (await t.get('/v1/uoms').expect(200)).body.data.find((u: { code: string }) => u.code === 'EA').id;
    await t.post('/v1/items', { itemNo: 'DOCS-UI-1', name: 'Seen from the docs', baseUomId: ea }).expect(201);

    const page = await browser.newPage();
    await page.goto(`${ctx.url}/docs`);
    // Authorize: the bearer scheme's dialog.
    await page.click('button.authorize');
    await page.fill('.modal-ux input[type="text"]', t.token);
    await page.click('.modal-ux .auth-btn-wrapper button.authorize');
    await page.click('.modal-ux button.btn-done');
    // GET /v1/items: open it, try it out, execute.
    await page.locator('.opblock-get .opblock-summary-path[data-path="/v1/items"]').first().click();
    await page.click('.opblock-get.is-open button.try-out__btn');
    await page.click('.opblock-get.is-open button.execute');
    await page.waitForSelector('.opblock-get.is-open .live-responses-table tbody .response-col_status', { timeout: 15_000 });
    const status = await page.locator('.opblock-get.is-open .live-responses-table tbody .response-col_status').first().textContent();
    expect(status?.trim()).toBe('200');
    const body = await page.locator('.opblock-get.is-open .live-responses-table tbody .response-col_description pre').first().textContent();
    expect(body).toContain('DOCS-UI-1');
  }, 60_000);
});
