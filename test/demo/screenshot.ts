/*
 * Screenshots a page of the running demo portal (`npm start`) with the
 * system's headless Chromium, signing in as the guest first.
 *
 *   node --require @backstage/cli/config/nodeTransform.cjs test/demo/screenshot.ts [entity] [out.png]
 *
 * entity: orders (default), cart or search-index. It prints the browser's
 * console errors and any error or warning banner on the page, and exits 1
 * when there are any.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { launchChromium } from './chromium';

const FRONTEND_URL = 'http://localhost:3000';

async function main() {
  const entity = process.argv[2] ?? 'orders';
  const out = resolve(process.argv[3] ?? `.demo/screenshots/${entity}.png`);
  mkdirSync(dirname(out), { recursive: true });
  const browser = await launchChromium();
  const problems: string[] = [];
  const reactWarnings = new Set<string>();
  try {
    const page = await browser.newPage({
      viewport: { width: 1440, height: 1000 },
    });
    page.on('console', msg => {
      if (msg.type() !== 'error') return;
      const text = msg.text();
      // React's development warnings (e.g. Material UI 4's findDOMNode in the
      // sign-in page) are upstream noise, not failures of the page.
      if (text.startsWith('Warning: '))
        reactWarnings.add(text.split('\n')[0].slice(0, 160));
      else problems.push(`console error: ${text}`);
    });
    page.on('pageerror', e => problems.push(`page error: ${e.message}`));
    // e.g. the sign-in page's "fallback to the legacy guest token?" when the auth backend fails.
    page.on('dialog', dialog => {
      problems.push(`dialog: ${dialog.message()}`);
      void dialog.dismiss();
    });
    const started = Date.now();
    await page.goto(
      `${FRONTEND_URL}/catalog/default/component/${entity}/kubernetes`,
    );
    // The dev app's sign-in page: the guest provider, through the demo backend.
    const enter = page.getByRole('button', { name: 'Enter' });
    await enter.waitFor({ timeout: 60_000 });
    await enter.click();
    // Backstage's Kubernetes content lists the entity's workloads by cluster.
    const cluster = page.getByText('demo', { exact: true }).first();
    await cluster.waitFor({ timeout: 60_000 });
    await page.waitForLoadState('networkidle');
    // Open the cluster to show its workloads, as a user would.
    await cluster.click();
    await page.waitForTimeout(1000);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const banners = await page
      .locator(
        '[class*="MuiAlert-standardError"], [class*="MuiAlert-standardWarning"], [class*="MuiAlert-filledError"]',
      )
      .allInnerTexts();
    for (const text of banners)
      problems.push(`banner: ${text.replace(/\s+/g, ' ').trim()}`);
    await page.screenshot({ path: out, fullPage: true });
    process.stdout.write(
      `${entity}: rendered in ${seconds} s; screenshot ${out}\n`,
    );
  } finally {
    await browser.close();
  }
  for (const warning of reactWarnings)
    process.stdout.write(`(react dev warning, ignored) ${warning}\n`);
  for (const problem of problems) process.stdout.write(`${problem}\n`);
  if (problems.length > 0) process.exitCode = 1;
}

main().catch(e => {
  process.stderr.write(`screenshot: ${e instanceof Error ? e.message : e}\n`);
  process.exit(1);
});
