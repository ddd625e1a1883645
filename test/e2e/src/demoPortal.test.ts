/*
 * The demo portal end to end, in Chromium: the guest finds the orphans of
 * `orders`, dry-runs and prunes them (kubectl confirms what happened in the
 * cluster), reloads the page in the middle of a prune and sees the card
 * attach to it again, and is refused on another team's `search-index`. The
 * fleet page shows both teams' orphans and the unowned ones, and nothing of
 * the `ledger` the guest may not read.
 *
 * One demo (simulator + backend + frontend, test/demo/start.ts) for the whole
 * file, in a fresh temporary state folder. Each step leaves a screenshot in
 * test/e2e/artifacts/; the before/during/after ones of the prune, the
 * fleet page and the snapshot pictures are copied to docs/screenshots/ for
 * the README.
 */
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import type {
  OrphansResponse,
  StatefulSetOrphans,
} from 'backstage-plugin-pvc-pruner-common';
import {
  launchChromium,
  openAsGuest,
  PageProblems,
  Screenshots,
  signInIfAsked,
  watchPage,
} from './__testUtils__/browser';
import { Demo, guestToken, startDemo } from './__testUtils__/demo';

const ARTIFACTS = resolve(__dirname, '../artifacts');
const DOCS_SCREENSHOTS = resolve(__dirname, '../../../docs/screenshots');

/** The demo scenario's orders-db: 2 replicas, claims of ordinals 2–4 left behind. */
const ORDERS_ORPHANS = [
  'data-orders-db-2',
  'data-orders-db-3',
  'data-orders-db-4',
  'wal-orders-db-2',
  'wal-orders-db-3',
];
const ORDERS_IN_USE = [
  'data-orders-db-0',
  'data-orders-db-1',
  'wal-orders-db-0',
  'wal-orders-db-1',
];
/** Extra latency of each claim deletion in the simulator, so a prune's progress can be seen. */
const DELETE_LATENCY_MS = 1500;
/** Longer for the reload step: the job must outlive a page load. */
const RELOAD_DELETE_LATENCY_MS = 5000;

let demo: Demo;
let browser: Browser;
let page: Page;
let problems: PageProblems;
let shots: Screenshots;
const copiedToDocs: Record<string, string> = {};

const entityPage = (entity: string) =>
  `${demo.frontendUrl}/catalog/default/component/${entity}/kubernetes`;
const card = () => page.getByTestId('pvc-pruner-card-slot');
const ordersSection = () =>
  page.getByRole('region', { name: 'StatefulSet shop/orders-db' });
const progressPanel = (kind: 'Dry run' | 'Prune') =>
  ordersSection().getByRole('region', {
    name: `${kind} of shop/orders-db progress`,
  });

/** The claim names in a StatefulSet section's orphan table (its first table). */
async function orphanNames(section: Locator): Promise<string[]> {
  const table = section.getByRole('table').first();
  await table.waitFor();
  const names = await table
    .locator('tbody tr')
    .evaluateAll(rows =>
      rows.map(
        row =>
          (row.querySelector('td') as HTMLElement | null)?.innerText
            .split('\n')[0]
            .trim() ?? '',
      ),
    );
  return names.filter(Boolean).sort();
}

/** The claim states of a progress panel, by claim name. */
async function claimStates(panel: Locator): Promise<Record<string, string>> {
  const rows = await panel
    .getByRole('table', { name: 'Claim progress' })
    .locator('tbody tr')
    .evaluateAll(trs =>
      trs.map(tr => [
        (tr.querySelector('td') as HTMLElement).innerText.trim(),
        (
          tr.querySelector('[data-testid="pvc-state"]') as HTMLElement
        ).innerText.trim(),
      ]),
    );
  return Object.fromEntries(rows);
}

async function snap(name: string, docsName?: string) {
  const file = await shots.take(page, name, { clip: card() });
  if (docsName) copiedToDocs[docsName] = file;
  return file;
}

beforeAll(async () => {
  rmSync(ARTIFACTS, { recursive: true, force: true });
  shots = new Screenshots(ARTIFACTS);
  demo = await startDemo();
  browser = await launchChromium();
  const context = await browser.newContext({
    viewport: { width: 1440, height: 900 },
  });
  page = await context.newPage();
  page.setDefaultTimeout(30_000);
  problems = watchPage(page);
}, 180_000);

afterAll(async () => {
  await browser?.close().catch(() => {});
  await demo?.stop();
  // Only a run that got through the prune, and was asked to, updates the README's images.
  if (
    process.env.UPDATE_README_SCREENSHOTS &&
    ['before', 'during', 'after', 'fleet'].every(name => copiedToDocs[name])
  ) {
    mkdirSync(DOCS_SCREENSHOTS, { recursive: true });
    // Every picture this run took, the snapshot ones included when their steps got that far.
    for (const [name, file] of Object.entries(copiedToDocs))
      copyFileSync(file, join(DOCS_SCREENSHOTS, `${name}.png`));
  }
  if (problems?.reactWarnings.size) {
    // eslint-disable-next-line no-console
    console.log(
      `React development warnings (upstream, ignored):\n${[
        ...problems.reactWarnings,
      ].join('\n')}`,
    );
  }
}, 60_000);

it('lists the orphans of orders for the signed-in guest', async () => {
  await openAsGuest(page, entityPage('orders'), ordersSection());
  const section = ordersSection();
  expect(await orphanNames(section)).toEqual(ORDERS_ORPHANS);
  await expect(
    section.getByText(/5 orphaned claims · 100 GiB reclaimable/).isVisible(),
  ).resolves.toBe(true);
  // orders also runs in the second cluster, found through the catalog and reached with a client certificate.
  const warehouse = card()
    .getByRole('region', { name: 'Cluster warehouse' })
    .getByRole('region', { name: 'StatefulSet fulfilment/orders-archive' });
  // Below the fold: its tables render once it scrolls into view.
  await warehouse.scrollIntoViewIfNeeded();
  expect(await orphanNames(warehouse)).toEqual([
    'data-orders-archive-2',
    'data-orders-archive-3',
  ]);
  // The claims of the running ordinals (one line per template) and the hand-made backup are kept, behind a disclosure.
  const keptButton = section.getByRole('button', {
    name: /5 claims kept, and why/,
  });
  await keptButton.click();
  for (const line of [
    'data-orders-db-0, data-orders-db-1',
    'wal-orders-db-0, wal-orders-db-1',
    'data-orders-db-backup',
    '"backup" after "data-orders-db-" is not an ordinal of this StatefulSet',
  ])
    await section.getByText(line, { exact: true }).waitFor();
  await expect(
    section
      .getByText('ordinals 0–1 are ones the StatefulSet runs (0–1)')
      .count(),
  ).resolves.toBe(2);
  await shots.take(page, 'orders-kept');
  await keptButton.click();
  await section.getByText('data-orders-db-backup').waitFor({ state: 'hidden' });
  expect(
    await section
      .getByRole('button', { name: 'Prune orphaned claims of orders-db' })
      .isEnabled(),
  ).toBe(true);
  await snap('orders-orphans', 'before');
}, 120_000);

it("shows both teams' orphans on the fleet page, in GiB and dollars, the unowned ones, and nothing of ledger, which the guest may not read", async () => {
  await page.goto(`${demo.frontendUrl}/pvc-pruner`);
  const table = page.getByRole('table', {
    name: 'Reclaimable storage by owner',
  });
  await table.waitFor({ timeout: 60_000 });
  const firstCells = (rows: Locator) =>
    rows.evaluateAll(trs =>
      trs.map(tr => (tr.querySelector('td') as HTMLElement).innerText.trim()),
    );
  // Most expensive first: search-index's Retain volumes cost more than orders' claims in both clusters.
  expect(await firstCells(table.locator('tbody tr'))).toEqual([
    'search',
    'search-index',
    'demo · search/search-index',
    'checkout',
    'orders',
    'demo · shop/orders-db',
    'warehouse · fulfilment/orders-archive',
    // cart has only the claims its deleted promotions-db left, marked as such.
    'cart',
    'demo · shop/promotions-db\ndeleted StatefulSet · its claims, as recorded · prune them from the entity\'s card',
  ]);
  await page
    .getByText(
      /3 entities with orphans, of 4 you may read · 9 orphaned claims · 200 GiB reclaimable · \$16\.00 a month/,
    )
    .waitFor();
  await page
    .getByText(
      /Claims of deleted StatefulSets · 2 claims · 20 GiB · \$3\.40 a month · apart from the orphans above/,
    )
    .waitFor();
  const unowned = page.getByRole('region', { name: 'Unowned' });
  await unowned.getByText('demo · search/nightly-reports').waitFor();
  // ledger (team payments, readable by its owners only) is in no row, no total and no CSV.
  expect(await page.getByText(/ledger/).count()).toBe(0);
  const href = await page
    .getByRole('link', { name: /Download CSV/ })
    .getAttribute('href');
  const csv = decodeURIComponent(
    href!.replace(/^data:text\/csv;charset=utf-8,/, ''),
  );
  expect(
    csv
      .trim()
      .split('\n')
      .map(line => line.split(',').slice(0, 5).join(',')),
  ).toEqual([
    'owner,entity,cluster,namespace,statefulset',
    'group:default/search,component:default/search-index,demo,search,search-index',
    'group:default/checkout,component:default/orders,demo,shop,orders-db',
    'group:default/checkout,component:default/orders,warehouse,fulfilment,orders-archive',
    'group:default/checkout,component:default/cart,demo,shop,promotions-db',
    '(unowned),,demo,search,nightly-reports',
  ]);
  // The API answers the guest the same: nothing of ledger.
  const token = await guestToken(demo.backendUrl);
  const fleet = await (
    await fetch(`${demo.backendUrl}/api/pvc-pruner/v1/fleet`, {
      headers: { Authorization: `Bearer ${token}` },
    })
  ).json();
  expect(JSON.stringify(fleet)).not.toMatch(/ledger|payments/);
  expect(fleet.totals.orphans).toBe(9);

  // Filtering by owner asks the backend, and leaves only that team.
  await page.getByRole('button', { name: 'Owner' }).click();
  await page.getByRole('option', { name: 'group:default/checkout' }).click();
  await table.getByText('search-index').waitFor({ state: 'hidden' });
  expect(await unowned.count()).toBe(0);
  await page.getByRole('button', { name: 'Owner' }).click();
  await page.getByRole('option', { name: 'All' }).click();
  await unowned.waitFor();
  const file = await shots.take(page, 'fleet');
  copiedToDocs.fleet = file;

  // Each entity links to its Kubernetes page, where its card is.
  await table.getByRole('link', { name: 'orders' }).click();
  await ordersSection().waitFor({ timeout: 60_000 });
  expect(page.url()).toBe(entityPage('orders'));
}, 120_000);

it('runs a dry run through the dialog, and deletes nothing', async () => {
  const before = await demo.claims('shop');
  const section = ordersSection();
  await section
    .getByRole('button', { name: 'Dry run prune of orders-db' })
    .click();
  const dialog = page.getByRole('dialog', {
    name: 'Dry run: prune shop/orders-db',
  });
  await dialog.waitFor();
  await expect(dialog.getByRole('status').innerText()).resolves.toMatch(
    /Will check 5 claims \(100 GiB\)/,
  );
  await shots.take(page, 'dry-run-dialog', { fit: false });
  await dialog.getByRole('button', { name: 'Start dry run' }).click();
  await dialog.waitFor({ state: 'hidden' });

  const panel = progressPanel('Dry run');
  await panel.getByText('Dry run finished').waitFor({ timeout: 60_000 });
  await expect(
    panel
      .getByRole('alert')
      .filter({ hasText: 'Dry run finished' })
      .innerText(),
  ).resolves.toMatch(
    /5 would be deleted, 0 skipped, 0 failed; 100 GiB would be reclaimed/,
  );
  const states = await claimStates(panel);
  expect(Object.keys(states).sort()).toEqual(ORDERS_ORPHANS);
  expect(new Set(Object.values(states))).toEqual(new Set(['Would be deleted']));
  await snap('dry-run-summary');

  // The cluster is untouched.
  expect(await demo.claims('shop')).toEqual(before);
  for (const name of [...ORDERS_ORPHANS, ...ORDERS_IN_USE])
    expect(before).toContain(name);

  await panel
    .getByRole('button', {
      name: 'Close the results of the Dry run of shop/orders-db',
    })
    .click();
  await panel.waitFor({ state: 'detached' });
}, 120_000);

it('prunes after the StatefulSet name is typed, showing progress as it goes', async () => {
  // Each claim deletion takes a visible moment in the simulator.
  await demo.simAdmin('POST', '/faults', {
    verb: 'delete',
    resource: 'persistentvolumeclaims',
    latencyMs: DELETE_LATENCY_MS,
  });
  const section = ordersSection();
  await section
    .getByRole('button', { name: 'Prune orphaned claims of orders-db' })
    .click();
  const dialog = page.getByRole('dialog', {
    name: 'Delete orphaned claims of shop/orders-db',
  });
  await dialog.waitFor();
  const confirm = dialog.getByRole('button', { name: 'Delete 5 claims' });
  expect(await confirm.isDisabled()).toBe(true);
  const nameBox = dialog.getByRole('textbox', {
    name: 'Type the StatefulSet name orders-db to confirm',
  });
  await nameBox.fill('orders');
  expect(await confirm.isDisabled()).toBe(true);
  await nameBox.fill('orders-db');
  expect(await confirm.isEnabled()).toBe(true);
  await shots.take(page, 'prune-dialog', { fit: false });
  // The demo's class takes each claim: the snapshot choice is ticked by default.
  expect(
    await dialog
      .getByRole('checkbox', { name: 'Keep a snapshot for 7 days' })
      .isChecked(),
  ).toBe(true);
  copiedToDocs['snapshot-dialog'] = await shots.take(
    page,
    'prune-dialog-snapshot',
    { clip: dialog },
  );
  await confirm.click();
  await dialog.waitFor({ state: 'hidden' });

  const panel = progressPanel('Prune');
  const bar = panel.getByRole('progressbar', {
    name: 'Prune of shop/orders-db: claims done',
  });
  await bar.waitFor();
  const seen: Array<{ value: number; states: Record<string, string> }> = [];
  let duringShot = false;
  const deadline = Date.now() + 90_000;
  for (;;) {
    const value = Number(await bar.getAttribute('aria-valuenow'));
    const states = await claimStates(panel);
    seen.push({ value, states });
    if (!duringShot && Object.values(states).includes('Deleting…')) {
      duringShot = true;
      await snap('prune-during', 'during');
    }
    if (value === 100 || Date.now() > deadline) break;
    await page.waitForTimeout(100);
  }
  // The claims are checked together and their deletes sent together: the
  // card shows them being deleted, short of done, before it shows them gone.
  expect(
    seen.some(
      s => s.value < 100 && Object.values(s.states).includes('Deleting…'),
    ),
  ).toBe(true);

  await panel.getByText('Prune finished').waitFor({ timeout: 60_000 });
  await expect(
    panel.getByRole('alert').filter({ hasText: 'Prune finished' }).innerText(),
  ).resolves.toMatch(/5 deleted, 0 skipped, 0 failed; 100 GiB reclaimed/);
  const states = await claimStates(panel);
  expect(new Set(Object.values(states))).toEqual(new Set(['Deleted']));
  // The card refreshed its orphan list when the job finished.
  await section.getByText('No orphaned claims.').waitFor();
  await snap('prune-after', 'after');

  const claims = await demo.claims('shop');
  for (const name of ORDERS_ORPHANS) expect(claims).not.toContain(name);
  for (const name of [...ORDERS_IN_USE, 'data-orders-db-backup'])
    expect(claims).toContain(name);

  await panel
    .getByRole('button', {
      name: 'Close the results of the Prune of shop/orders-db',
    })
    .click();
}, 150_000);

it('attaches to a prune again after a reload in the middle of it', async () => {
  // New orphans: scale orders-db down to one replica.
  await demo.kubectl('-n', 'shop', 'scale', 'sts', 'orders-db', '--replicas=1');
  await demo.kubectl(
    '-n',
    'shop',
    'wait',
    '--for=delete',
    'pod/orders-db-1',
    '--timeout=60s',
  );
  await demo.simAdmin('DELETE', '/faults');
  await demo.simAdmin('POST', '/faults', {
    verb: 'delete',
    resource: 'persistentvolumeclaims',
    latencyMs: RELOAD_DELETE_LATENCY_MS,
  });
  await card().getByRole('button', { name: 'Refresh' }).click();
  const section = ordersSection();
  await section
    .getByRole('table')
    .first()
    .getByText('wal-orders-db-1')
    .waitFor();
  expect(await orphanNames(section)).toEqual([
    'data-orders-db-1',
    'wal-orders-db-1',
  ]);

  await section
    .getByRole('button', { name: 'Prune orphaned claims of orders-db' })
    .click();
  const dialog = page.getByRole('dialog', {
    name: 'Delete orphaned claims of shop/orders-db',
  });
  await dialog
    .getByRole('textbox', {
      name: 'Type the StatefulSet name orders-db to confirm',
    })
    .fill('orders-db');
  await dialog.getByRole('button', { name: 'Delete 2 claims' }).click();
  await dialog.waitFor({ state: 'hidden' });
  await progressPanel('Prune').getByRole('progressbar').waitFor();

  await page.reload();
  await signInIfAsked(page, progressPanel('Prune'));
  const panel = progressPanel('Prune');
  // Attached to the job while it still runs: the card only attaches to queued or running jobs.
  await panel
    .getByText(
      'This prune was already under way, started by user:default/guest; showing it from the start.',
    )
    .waitFor();
  const value = Number(
    await panel.getByRole('progressbar').getAttribute('aria-valuenow'),
  );
  expect(value).toBeLessThan(100);
  await snap('reload-reattached');

  await panel.getByText('Prune finished').waitFor({ timeout: 60_000 });
  await expect(
    panel.getByRole('alert').filter({ hasText: 'Prune finished' }).innerText(),
  ).resolves.toMatch(/2 deleted, 0 skipped, 0 failed; 40 GiB reclaimed/);
  await snap('reload-finished');

  const claims = await demo.claims('shop');
  expect(claims).not.toContain('data-orders-db-1');
  expect(claims).not.toContain('wal-orders-db-1');
  expect(claims).toContain('data-orders-db-0');
  expect(claims).toContain('wal-orders-db-0');
  await demo.simAdmin('DELETE', '/faults');
}, 150_000);

it("refuses a prune of another team's search-index, in the card and in the API", async () => {
  await page.goto(entityPage('search-index'));
  const section = page.getByRole('region', {
    name: 'StatefulSet search/search-index',
  });
  await section.waitFor({ timeout: 60_000 });
  expect(await orphanNames(section)).toEqual([
    'data-search-index-2',
    'data-search-index-3',
  ]);
  const prune = section.getByRole('button', {
    name: 'Prune orphaned claims of search-index',
  });
  expect(await prune.isDisabled()).toBe(true);
  expect(
    await section
      .getByRole('button', { name: 'Dry run prune of search-index' })
      .isDisabled(),
  ).toBe(true);
  await section
    .getByText(
      "You don't own this entity, or you're not allowed to prune its volumes (pvc-pruner.prune).",
    )
    .waitFor();
  await snap('search-index-denied');

  // The API refuses too: the guest's own token, the real claims.
  const token = await guestToken(demo.backendUrl);
  const entityRef = 'component:default/search-index';
  const api = `${demo.backendUrl}/api/pvc-pruner/v1`;
  const orphans = (await (
    await fetch(`${api}/orphans?${new URLSearchParams({ entityRef })}`, {
      headers: { Authorization: `Bearer ${token}` },
    })
  ).json()) as OrphansResponse;
  const cluster = orphans.clusters[0];
  if (!cluster.ok) throw new Error(`cluster ${cluster.cluster} failed`);
  const sts = cluster.statefulSets.find(
    s => s.name === 'search-index',
  ) as StatefulSetOrphans;
  const res = await fetch(`${api}/prune-jobs`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({
      entityRef,
      cluster: cluster.cluster,
      namespace: sts.namespace,
      statefulSet: sts.name,
      pvcs: sts.orphans.map(({ name, uid }) => ({ name, uid })),
    }),
  });
  expect(res.status).toBe(403);
  const body = (await res.json()) as { error: { name: string } };
  expect(body.error.name).toBe('NotAllowedError');
  expect(await demo.claims('search')).toEqual([
    'data-search-index-0',
    'data-search-index-1',
    'data-search-index-2',
    'data-search-index-3',
    // The unowned nightly-reports' claims, untouched too.
    'scratch-nightly-reports-0',
    'scratch-nightly-reports-1',
    'scratch-nightly-reports-2',
  ]);
}, 120_000);

it('restores a pruned claim from its snapshot, and a scale-up mounts it with the snapshot’s data', async () => {
  await page.goto(entityPage('orders'));
  const list = page.getByRole('region', {
    name: 'Snapshots of shop/orders-db',
  });
  await list.waitFor({ timeout: 60_000 });
  // One snapshot per deleted claim of both prunes, read from the cluster.
  const kept = (
    await demo.kubectl(
      '-n',
      'shop',
      'get',
      'volumesnapshot',
      '-l',
      'app.kubernetes.io/managed-by=pvc-pruner,pvc-pruner.backstage.io/statefulset=orders-db',
      '-o',
      'jsonpath={range .items[*]}{.metadata.annotations.pvc-pruner\\.backstage\\.io/claim-name}{"\\n"}{end}',
    )
  )
    .split('\n')
    .filter(Boolean)
    .sort();
  expect(kept).toEqual(
    [...ORDERS_ORPHANS, 'data-orders-db-1', 'wal-orders-db-1'].sort(),
  );
  expect(await list.locator('tbody tr').count()).toBe(kept.length);
  copiedToDocs.snapshots = await shots.take(page, 'snapshots', {
    clip: page.getByRole('region', { name: 'Kept snapshots' }),
  });

  await list
    .getByRole('button', { name: /^Restore data-orders-db-1 from / })
    .click();
  const dialog = page.getByRole('dialog', {
    name: 'Restore data-orders-db-1?',
  });
  await dialog
    .getByRole('button', { name: 'Restore data-orders-db-1' })
    .click();
  await page
    .getByText(
      /Restored data-orders-db-1 from .*: scale orders-db to 2 replicas/,
    )
    .waitFor();
  // The card shows it as an orphan again, with the replica count that brings it back.
  const section = ordersSection();
  await section
    .getByRole('table')
    .first()
    .getByText('data-orders-db-1')
    .waitFor({ timeout: 30_000 });
  await section.getByText(/scaled to 2 replicas or more/).waitFor();
  await snap('restored-orphan');

  await demo.kubectl('-n', 'shop', 'scale', 'sts', 'orders-db', '--replicas=2');
  await demo.kubectl(
    '-n',
    'shop',
    'wait',
    '--for=condition=Ready',
    'pod/orders-db-1',
    '--timeout=60s',
  );
  const mounted = await demo.kubectl(
    '-n',
    'shop',
    'get',
    'pod',
    'orders-db-1',
    '-o',
    'jsonpath={.spec.volumes[*].persistentVolumeClaim.claimName}',
  );
  expect(mounted.split(' ')).toContain('data-orders-db-1');
  const volume = await demo.kubectl(
    '-n',
    'shop',
    'get',
    'pvc',
    'data-orders-db-1',
    '-o',
    'jsonpath={.spec.dataSource.name} {.spec.volumeName}',
  );
  const [snapshotName, pvName] = volume.trim().split(' ');
  expect(snapshotName).toMatch(/^data-orders-db-1-/);
  // The simulator's provisioner records where the new volume's data came from.
  const pv = JSON.parse(
    await demo.kubectl('get', 'pv', pvName, '-o', 'json'),
  ) as { metadata: { annotations?: Record<string, string> } };
  const origin = pv.metadata.annotations ?? {};
  expect(origin['kube-sim.io/restored-from-snapshot']).toBe(
    `shop/${snapshotName}`,
  );
  // …taken of the claim the first prune deleted, by its uid.
  expect(origin['kube-sim.io/restored-from-claim-uid']).toBe(
    await demo.kubectl(
      '-n',
      'shop',
      'get',
      'volumesnapshot',
      snapshotName,
      '-o',
      'jsonpath={.metadata.labels.pvc-pruner\\.backstage\\.io/claim-uid}',
    ),
  );
}, 150_000);

/** The PersistentVolumes of the demo cluster, by name, with their phase and reclaim policy. */
async function volumes(): Promise<Record<string, string>> {
  const lines = await demo.kubectl(
    'get',
    'pv',
    '-o',
    'jsonpath={range .items[*]}{.metadata.name} {.status.phase} {.spec.persistentVolumeReclaimPolicy} {.spec.claimRef.namespace}/{.spec.claimRef.name}{"\\n"}{end}',
  );
  return Object.fromEntries(
    lines
      .split('\n')
      .filter(Boolean)
      .map(line => {
        const [name, ...rest] = line.split(' ');
        return [name, rest.join(' ')];
      }),
  );
}

const leftBehindSection = () =>
  page.getByRole('region', { name: 'Claims of deleted StatefulSets' });
const promotionsSection = () =>
  leftBehindSection().getByRole('region', {
    name: 'StatefulSet shop/promotions-db',
  });
const PROMOTIONS_CLAIMS = ['data-promotions-db-0', 'data-promotions-db-1'];

it("shows the claims cart's deleted promotions-db left behind, prunes them, and then reclaims their Released volumes from the card", async () => {
  await page.goto(entityPage('cart'));
  const section = promotionsSection();
  await section.waitFor({ timeout: 60_000 });
  await section
    .getByText(/^Left by StatefulSet promotions-db, deleted; last seen \d+ \w+/)
    .waitFor();
  expect(await orphanNames(section)).toEqual(PROMOTIONS_CLAIMS);
  copiedToDocs['left-behind'] = await shots.take(page, 'left-behind', {
    clip: leftBehindSection(),
  });
  // The claims are in the cluster, bound to Retain volumes, with no StatefulSet of that name.
  expect(await demo.claims('shop')).toEqual(
    expect.arrayContaining(PROMOTIONS_CLAIMS),
  );
  await expect(
    demo.kubectl('-n', 'shop', 'get', 'sts', 'promotions-db'),
  ).rejects.toThrow(/NotFound|not found/);
  const boundBefore = Object.entries(await volumes()).filter(([, v]) =>
    /^Bound Retain shop\/data-promotions-db-/.test(v),
  );
  expect(boundBefore).toHaveLength(2);

  await section
    .getByRole('button', { name: 'Prune orphaned claims of promotions-db' })
    .click();
  const dialog = page.getByRole('dialog', {
    name: 'Delete orphaned claims of shop/promotions-db',
  });
  await dialog.waitFor();
  await dialog
    .getByRole('textbox', {
      name: 'Type the StatefulSet name promotions-db to confirm',
    })
    .fill('promotions-db');
  await dialog.getByRole('button', { name: 'Delete 2 claims' }).click();
  await dialog.waitFor({ state: 'hidden' });
  const panel = section.getByRole('region', {
    name: 'Prune of shop/promotions-db progress',
  });
  await panel.getByText('Prune finished').waitFor({ timeout: 60_000 });
  for (const name of PROMOTIONS_CLAIMS)
    expect(await demo.claims('shop')).not.toContain(name);

  // Their volumes are Released and still billed: the outcome offers to reclaim them.
  const released = boundBefore.map(([name]) => name);
  const afterPrune = await volumes();
  for (const name of released)
    expect(afterPrune[name]).toMatch(/^Released Retain /);
  const offer = panel.getByRole('region', { name: 'Released volumes' });
  await offer
    .getByRole('button', { name: 'Also reclaim these volumes' })
    .click({ timeout: 60_000 });
  copiedToDocs['reclaim-dialog'] = await shots.take(page, 'reclaim-dialog', {
    clip: page.getByRole('dialog'),
  });
  const reclaim = page.getByRole('dialog', {
    name: 'Reclaim 2 Released volumes',
  });
  await reclaim.getByRole('button', { name: /^Reclaim 20 GiB/ }).click();
  await reclaim.getByText(/^Reclaim succeeded/).waitFor({ timeout: 60_000 });
  await shots.take(page, 'reclaim-finished', { clip: reclaim });
  // kubectl get pv: the volumes, and so their disks, are gone.
  const afterReclaim = await volumes();
  for (const name of released) expect(afterReclaim[name]).toBeUndefined();
  await reclaim.getByRole('button', { name: 'Close' }).click();
}, 180_000);

it('lists the Released volumes on the fleet page, with their size, class, cost and the claim they held, and reclaims the unowned one', async () => {
  await page.goto(`${demo.frontendUrl}/pvc-pruner`);
  const section = page.getByRole('region', { name: 'Released volumes' });
  const table = section.getByRole('table', { name: 'Released volumes' });
  await table.waitFor({ timeout: 60_000 });
  const row = table
    .locator('tbody tr')
    .filter({ hasText: 'pvc-0d5e1a7c-released-before-the-demo' });
  const text = await row.innerText();
  expect(text).toMatch(/50 GiB/);
  expect(text).toMatch(/premium-retain/);
  expect(text).toMatch(/shop\/data-orders-db-7/);
  expect(text).toMatch(/\$/);
  // promotions-db's volumes, reclaimed from cart's card, are no longer billed here.
  expect(await table.locator('tbody tr').count()).toBe(1);
  copiedToDocs['released-volumes'] = await shots.take(
    page,
    'released-volumes',
    { clip: section },
  );
  await row
    .getByRole('button', {
      name: 'Reclaim pvc-0d5e1a7c-released-before-the-demo',
    })
    .click();
  const reclaim = page.getByRole('dialog', {
    name: 'Reclaim 1 Released volume',
  });
  await reclaim.getByRole('button', { name: /^Reclaim 50 GiB/ }).click();
  await reclaim.getByText(/^Reclaim succeeded/).waitFor({ timeout: 60_000 });
  expect(
    (await volumes())['pvc-0d5e1a7c-released-before-the-demo'],
  ).toBeUndefined();
  await reclaim.getByRole('button', { name: 'Close' }).click();
  // Nothing is left billed: the page, read again, says so in money.
  await page.goto(`${demo.frontendUrl}/pvc-pruner`);
  await page
    .getByRole('region', { name: 'Released volumes' })
    .getByText(
      /^0 Released volumes · 0 B \(\$0\.00 a month\) still billed until reclaimed/,
    )
    .waitFor({ timeout: 60_000 });
}, 150_000);

it('shows the claims of a StatefulSet deleted with kubectl on its card after one refresh', async () => {
  await page.goto(entityPage('cart'));
  // cart's card has been read (a scan, which records its claims' lineage).
  const analytics = page.getByRole('region', {
    name: 'StatefulSet shop/cart-analytics',
  });
  await analytics.waitFor({ timeout: 60_000 });
  await demo.kubectl('-n', 'shop', 'delete', 'sts', 'cart-analytics');
  await card()
    .getByRole('button', { name: 'Refresh', exact: true })
    .first()
    .click();
  const left = leftBehindSection().getByRole('region', {
    name: 'StatefulSet shop/cart-analytics',
  });
  await left
    .getByText(/^Left by StatefulSet cart-analytics, deleted/)
    .waitFor({ timeout: 30_000 });
  const names = await orphanNames(left);
  expect(names.length).toBeGreaterThan(0);
  for (const name of names) expect(name).toMatch(/-cart-analytics-\d+$/);
  await snap('deleted-with-kubectl');
}, 120_000);

it('saw no errors in the page', () => {
  expect(problems.errors).toEqual([]);
});
