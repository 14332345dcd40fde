/**
 * The API explorer in a real browser: the system's Chromium (Debian's `chromium`, which .ci/run
 * installs) driven by playwright-core. /docs loads with no console error and no request to another
 * host; the key entered once in Authorize is sent, a Practitioner search by family answers 200 with
 * matches, v1 chosen answers with the same key, logged out 401; / shows the server and its resources.
 * Without a browser the file is skipped with one line. EXPLORER_SCREENSHOTS=1 also writes
 * docs/explorer-docs.png and docs/explorer-home.png (the README shows the first).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FIXTURES, ROOT, testApp } from './helpers/app.ts';
import { API_KEY } from './helpers/search.ts';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => existsSync(p));
const SCREENSHOTS = process.env.EXPLORER_SCREENSHOTS === '1';

if (!CHROMIUM) {
  t.plan(0, 'no Chromium (/usr/bin/chromium): the browser test is skipped; apt-get install chromium');
} else {
  const { chromium } = await import('playwright-core');
  // PUBLIC_BASE_URL unset: the documents name the address the browser used.
  const { app, db } = await testApp(t, { env: { API_KEYS: API_KEY, PUBLIC_BASE_URL: '' }, paths: [path.join(FIXTURES, 'directory')] });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  page.setDefaultTimeout(20_000);
  const errors: string[] = [];
  const outside: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (url.protocol !== 'data:' && url.origin !== origin) outside.push(r.url());
  });

  /** Runs the GET search that is open and shows its response status and body. */
  const execute = async (op: string): Promise<{ status: string; body: string }> => {
    const block = page.locator(op);
    await block.locator('button.execute').click();
    await block.locator('.live-responses-table tr.response').first().waitFor();
    const status = (await block.locator('.live-responses-table tr.response .response-col_status').first().innerText()).trim();
    const body = await block.locator('.live-responses-table tr.response .response-col_description pre.microlight').first().innerText();
    return { status, body };
  };
  /** Opens Authorize, runs `act` in the dialog, closes it. */
  const authorize = async (act: () => Promise<void>) => {
    await page.locator('.scheme-container button.authorize').click();
    await act();
    await page.locator('.dialog-ux .modal-ux-header .close-modal').click();
  };

  t.test('/docs: Swagger UI from the server only; the key entered once; a search by family, v1, then without the key', async (t) => {
    await page.goto(`${origin}/docs`);
    const op = '#operations-Practitioner-searchPractitioner';
    await page.locator(op).waitFor();
    t.match(await page.locator('.information-container .title').innerText(), /Health directory FHIR search API v2/, 'the v2 document is shown first');

    await authorize(async () => {
      await page.locator('.auth-container input').fill(API_KEY);
      await page.locator('.auth-btn-wrapper button.authorize').click();
      await page.locator('.auth-btn-wrapper button', { hasText: 'Logout' }).waitFor();
    });
    await page.locator(`${op} .opblock-summary`).click();
    await page.locator(`${op} button.try-out__btn`).click();
    await page.locator(`${op} tr[data-param-name="family"] input`).fill('martin');
    const found = await execute(op);
    t.equal(found.status, '200', 'the search answers 200');
    const bundle = JSON.parse(found.body) as { resourceType: string; entry?: { search: { mode: string }; resource: { name?: { family?: string }[] } }[] };
    const matches = (bundle.entry ?? []).filter((e) => e.search.mode === 'match');
    t.equal(bundle.resourceType, 'Bundle', 'the Bundle is shown');
    t.ok(matches.length > 0, `${matches.length} matches`);
    t.ok(matches.every((e) => (e.resource.name ?? []).some((n) => /^martin/i.test(n.family ?? ''))), 'each with a family name starting with martin');
    const curl = await page.locator(`${op} .curl-command`).innerText();
    t.match(curl, `${origin}/fhir/v2/Practitioner?family=martin`, 'sent to the server the page came from');
    t.match(curl, /SERVICE-API-KEY: test-key/, 'with the key');
    if (SCREENSHOTS) {
      // The search's request and the top of its Bundle.
      await page.locator(`${op} .responses-wrapper`).evaluate((e: { scrollIntoView(): void }) => e.scrollIntoView());
      await page.screenshot({ path: path.join(ROOT, 'docs', 'explorer-docs.png') });
    }

    await page.locator('.topbar select').selectOption({ label: 'v1 (deprecated)' });
    const v1 = '#operations-Organization-searchOrganization';
    await page.locator(v1).waitFor();
    t.match(await page.locator('.information-container .title').innerText(), /v1 \(deprecated\)/, 'v1 chosen');
    t.equal(await page.locator(op).count(), 0, 'v1 serves Organization only');
    await page.locator(`${v1} .opblock-summary`).click();
    await page.locator(`${v1} button.try-out__btn`).click();
    await page.locator(`${v1} tr[data-param-name="name"] input`).fill('hopital');
    const organizations = await execute(v1);
    t.equal(organizations.status, '200', 'a v1 search with the key entered once, in v2');
    t.match(organizations.body, /"resourceType": "Bundle"/);

    await authorize(() => page.locator('.auth-btn-wrapper button', { hasText: 'Logout' }).click());
    const refused = await execute(v1);
    t.equal(refused.status, '401', 'logged out: 401');
    t.match(refused.body, /"resourceType": "OperationOutcome"/);
    t.same(outside, [], 'no request to another host');
    t.same(errors.filter((e) => !/401 \(Unauthorized\)/.test(e)), [], 'no console error (but the refused search)');
  });

  t.test('/: the server, its bases, the resources of each type; the docs a click away', async (t) => {
    errors.length = 0;
    await page.goto(`${origin}/`);
    t.match(await page.locator('h1').innerText(), /^annuaire-fhir \d/);
    t.match(await page.locator('body').innerText(), `${origin}/fhir/v2`);
    const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n from resource where type = 'Practitioner'`;
    t.match(await page.locator('#resources').innerText(), new RegExp(`Practitioner\\s+${n}\\b`), `${n} practitioners`);
    t.match(await page.locator('#api-key').innerText(), /SERVICE-API-KEY/);
    if (SCREENSHOTS) await page.screenshot({ path: path.join(ROOT, 'docs', 'explorer-home.png'), fullPage: true });
    await page.locator('a', { hasText: 'Interactive API docs' }).click();
    await page.locator('#operations-Practitioner-searchPractitioner').waitFor();
    t.equal(new URL(page.url()).pathname, '/docs');
    t.same(outside, [], 'no request to another host');
    t.same(errors, [], 'no console error');
  });
}
