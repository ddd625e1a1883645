/*
 * The system's headless Chromium (Debian's /usr/bin/chromium; CI installs it
 * in .ci/run) driven by playwright-core. No browser is ever downloaded. The
 * demo's screenshot scripts, the e2e tests and bench:frontend all launch it here.
 */
import { Browser, chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
