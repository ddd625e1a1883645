/*
 * Driving the system's headless Chromium in the e2e tests (launched as
 * test/demo/chromium.ts says).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Locator, Page } from 'playwright-core';

// test/demo is the repository's demo script, not a package.
// eslint-disable-next-line @backstage/no-relative-monorepo-imports
export { launchChromium } from '../../../demo/chromium';

/** Two frames and a moment, so that layout that follows a resize is done. */
async function settle(page: Page) {
  await page.evaluate(
    () =>
      new Promise<void>(resolveFrame =>
        requestAnimationFrame(() =>
          requestAnimationFrame(() => resolveFrame()),
        ),
      ),
  );
  await page.waitForTimeout(150);
}

/**
 * The page width of every screenshot (and of the page: at 1280 px the dev
 * page is narrower than the card's orphan table); the height follows the content.
 */
const WIDTH = 1440;
const MIN_HEIGHT = 900;
const MAX_HEIGHT = 4000;

/**
 * What went wrong in the page: uncaught errors, and console errors other
 * than React's development warnings (upstream noise, e.g. Material UI 4's
 * findDOMNode), which are counted apart.
 */
export interface PageProblems {
  errors: string[];
  reactWarnings: Set<string>;
}

export function watchPage(page: Page): PageProblems {
  const problems: PageProblems = { errors: [], reactWarnings: new Set() };
  page.on('console', msg => {
    if (msg.type() !== 'error') return;
    const text = msg.text();
    if (text.startsWith('Warning: ')) {
      problems.reactWarnings.add(text.split('\n')[0].slice(0, 160));
    } else {
      problems.errors.push(`console error: ${text.slice(0, 500)}`);
    }
  });
  page.on('pageerror', e => problems.errors.push(`page error: ${e.message}`));
  // The sign-in page asks confirm() about a legacy guest token only when the
  // auth backend fails; accept it as a user would.
  page.on('dialog', dialog => {
    problems.errors.push(`dialog: ${dialog.message()}`);
    void dialog.accept();
  });
  return problems;
}

/** Signs in as the guest if the sign-in page shows, then waits for `ready`. */
export async function signInIfAsked(page: Page, ready: Locator) {
  const enter = page.getByRole('button', { name: 'Enter' });
  await enter.or(ready).first().waitFor({ timeout: 90_000 });
  if (await enter.isVisible()) await enter.click();
  await ready.waitFor({ timeout: 60_000 });
}

/** Opens a page of the demo, signing in as the guest when asked. */
export async function openAsGuest(page: Page, url: string, ready: Locator) {
  await page.goto(url);
  await signInIfAsked(page, ready);
}

/**
 * Screenshots. The demo's layout scrolls inside its content area, so a
 * full-page screenshot would show only the viewport: the viewport is grown
 * to the content's height first.
 */
export class Screenshots {
  readonly taken: string[] = [];

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /**
   * The page as `<n>-<name>.png`, grown to its content's height; with
   * `clip`, only that element; with `fit: false`, the page at the normal
   * viewport height (for dialogs, which sit in the middle of the viewport).
   */
  async take(
    page: Page,
    name: string,
    options: { clip?: Locator; fit?: boolean } = {},
  ): Promise<string> {
    const { clip, fit = true } = options;
    await page.setViewportSize({ width: WIDTH, height: MIN_HEIGHT });
    await settle(page);
    if (fit) {
      const height = await page.evaluate(() =>
        Math.max(
          ...Array.from(document.querySelectorAll('body, body *'), el =>
            el.scrollHeight > el.clientHeight && el.clientHeight > 0
              ? el.scrollHeight + el.getBoundingClientRect().top
              : 0,
          ),
        ),
      );
      await page.setViewportSize({
        width: WIDTH,
        height: Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(height))),
      });
      await settle(page);
    }
    const file = join(
      this.dir,
      `${String(this.taken.length + 1).padStart(2, '0')}-${name}.png`,
    );
    const box = clip ? await clip.boundingBox() : null;
    await page.screenshot({
      path: file,
      ...(box ? { clip: box } : {}),
      animations: 'disabled',
      caret: 'hide',
    });
    this.taken.push(file);
    return file;
  }
}
