/*
 * Screenshots the prune dialog with its snapshot choice, rendered alone by
 * snapshotDialogPage.tsx beside it (bundled here with esbuild), in
 * the system's headless Chromium. No backend or cluster is needed: this is
 * for the README while the demo's cluster serves no VolumeSnapshotClasses.
 *
 *   node --require @backstage/cli/config/nodeTransform.cjs test/demo/dialogScreenshot.ts [out.png]
 *
 * It exits 1 on any console or page error.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { launchChromium } from './chromium';

const ENTRY = resolve(__dirname, 'snapshotDialogPage.tsx');

async function main() {
  const out = resolve(
    process.argv[2] ?? '.demo/screenshots/snapshot-dialog.png',
  );
  mkdirSync(dirname(out), { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'snapshot-dialog-'));
  await build({
    entryPoints: [ENTRY],
    bundle: true,
    outfile: join(dir, 'page.js'),
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    loader: { '.svg': 'dataurl', '.png': 'dataurl' },
    logLevel: 'error',
  });
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><html><head><meta charset="utf-8"></head><body><div id="root"></div><script src="page.js"></script></body></html>',
  );
  const browser = await launchChromium();
  const problems: string[] = [];
  try {
    const page = await browser.newPage({
      viewport: { width: 1100, height: 1000 },
    });
    page.on('console', msg => {
      if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
    });
    page.on('pageerror', e => problems.push(`page error: ${e.message}`));
    await page.goto(pathToFileURL(join(dir, 'index.html')).href);
    const dialog = page.getByRole('dialog');
    await dialog.waitFor({ timeout: 30_000 });
    await page
      .getByRole('checkbox', { name: /Keep a snapshot for/ })
      .waitFor({ timeout: 10_000 });
    // Down to the last claims: one with a class, one without, one on a Retain volume.
    await page
      .getByRole('list', { name: 'Claims to prune' })
      .evaluate(list => list.scrollTo(0, list.scrollHeight));
    await page.waitForTimeout(500);
    await page.locator('[class*="MuiDialog-paper"]').screenshot({ path: out });
    process.stdout.write(`screenshot ${out}\n`);
  } finally {
    await browser.close();
  }
  for (const problem of problems) process.stdout.write(`${problem}\n`);
  if (problems.length > 0) process.exitCode = 1;
}

main().catch(e => {
  process.stderr.write(
    `dialogScreenshot: ${e instanceof Error ? e.message : e}\n`,
  );
  process.exit(1);
});
