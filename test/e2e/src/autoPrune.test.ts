/*
 * Automatic pruning in the demo portal, in Chromium: recommendations has
 * opted in (`pvc-pruner.backstage.io/auto-prune: "2m"`). Its card says when
 * each orphan becomes eligible; the guest keeps one through the card; the
 * before notice arrives in the portal's notifications; the scheduled run
 * prunes the one left, with a snapshot, and the after notice replaces the
 * before one. kubectl confirms what happened, and that both kept claims
 * (the card's, and the one with the kubectl keep annotation) survive.
 */
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
  launchChromium,
  openAsGuest,
  PageProblems,
  Screenshots,
  watchPage,
} from './__testUtils__/browser';
import { Demo, startDemo } from './__testUtils__/demo';

const ARTIFACTS = resolve(__dirname, '../artifacts/auto-prune');
const DOCS_SCREENSHOTS = resolve(__dirname, '../../../docs/screenshots');
const PRUNED = 'data-recommendations-db-1';
const KEPT_BY_CARD = 'data-recommendations-db-2';
const KEPT_BY_ANNOTATION = 'data-recommendations-db-3';

let demo: Demo;
let browser: Browser;
let page: Page;
let problems: PageProblems;
let shots: Screenshots;
const copiedToDocs: Record<string, string> = {};

const card = () => page.getByTestId('pvc-pruner-card-slot');
const section = () =>
  page.getByRole('region', { name: 'StatefulSet shop/recommendations-db' });
const rowOf = (claim: string) =>
  section().getByRole('row').filter({ hasText: claim });

beforeAll(async () => {
  rmSync(ARTIFACTS, { recursive: true, force: true });
  shots = new Screenshots(ARTIFACTS);
  demo = await startDemo({ autoPrune: true });
  browser = await launchChromium();
  const context = await browser.newContext({
    viewport: { width: 1440, height: 900 },
  });
  page = await context.newPage();
  page.setDefaultTimeout(30_000);
  problems = watchPage(page);
}, 240_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await demo?.stop();
  if (
    process.env.UPDATE_README_SCREENSHOTS &&
    ['auto-prune', 'auto-prune-notices'].every(name => copiedToDocs[name])
  ) {
    mkdirSync(DOCS_SCREENSHOTS, { recursive: true });
    for (const [name, file] of Object.entries(copiedToDocs))
      copyFileSync(file, join(DOCS_SCREENSHOTS, `${name}.png`));
  }
}, 60_000);

it('shows when each orphan of the opted-in recommendations becomes eligible, and keeps one through the card', async () => {
  await openAsGuest(
    page,
    `${demo.frontendUrl}/catalog/default/component/recommendations/kubernetes`,
    section(),
  );
  await card()
    .getByText(/Automatic pruning: on/)
    .waitFor();
  await rowOf(PRUNED)
    .getByText(/Eligible (on|since)/)
    .waitFor();
  await rowOf(KEPT_BY_ANNOTATION)
    .getByText(/Kept by its pvc-pruner.backstage.io\/keep annotation/)
    .waitFor();
  await rowOf(KEPT_BY_CARD)
    .getByRole('button', {
      name: `Keep ${KEPT_BY_CARD} from automatic pruning`,
    })
    .click();
  const dialog = page.getByRole('dialog');
  await dialog
    .getByLabel(/Reason/)
    .fill('the March import is replayed from it');
  await shots.take(page, 'keep-dialog', { fit: false });
  await dialog.getByRole('button', { name: /^Keep$/ }).click();
  await dialog.waitFor({ state: 'hidden' });
  await rowOf(KEPT_BY_CARD)
    .getByText(/Kept by user:default\/guest/)
    .waitFor();
  await rowOf(KEPT_BY_CARD)
    .getByText(/the March import is replayed from it/)
    .waitFor();
  copiedToDocs['auto-prune'] = await shots.take(page, 'auto-prune', {
    clip: card(),
  });
}, 120_000);

it('tells the guest in the portal before the run, prunes the orphan left with a snapshot, and tells again after', async () => {
  await page.goto(`${demo.frontendUrl}/notifications`);
  // Announced within notifyBefore (1m) of its grace (2m) ending.
  await page
    .getByRole('link', {
      name: /1 claim of recommendations-db will be pruned on/,
    })
    .waitFor({ timeout: 150_000 });
  copiedToDocs['auto-prune-notices'] = await shots.take(page, 'notices-before');
  // The after notice replaces the before one (same scope), live through signals.
  await page
    .getByRole('link', {
      name: /1 claim of recommendations-db pruned automatically/,
    })
    .waitFor({ timeout: 150_000 });
  await shots.take(page, 'notices-after');
  const claims = await demo.claims('shop');
  expect(claims).not.toContain(PRUNED);
  expect(claims).toEqual(
    expect.arrayContaining([KEPT_BY_CARD, KEPT_BY_ANNOTATION]),
  );
  const snapshots = await demo.kubectl(
    '-n',
    'shop',
    'get',
    'volumesnapshots',
    '-o',
    'jsonpath={range .items[*]}{.spec.source.persistentVolumeClaimName}{"\\n"}{end}',
  );
  expect(snapshots.split('\n')).toContain(PRUNED);
}, 330_000);

it('saw no errors in the page', () => {
  expect(problems.errors).toEqual([]);
});
