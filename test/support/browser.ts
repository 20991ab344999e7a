import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { findChromium } from './chromium.ts';

/** Where the browser tests leave screenshots of the main views for a reviewer. */
export const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-results', 'screenshots');

/** The Chromium vitest.config.ts found (it leaves these tests out when there is none). */
export function launchBrowser(): Promise<Browser> {
  const found = findChromium();
  if (found.path === null) throw new Error(`The browser tests need a Chromium: ${found.why}`);
  // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: found.path, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** A page of the dashboard at desktop (1280) or phone (390) width. */
export async function openPage(browser: Browser, width: 1280 | 390 = 1280): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: width === 390 ? 844 : 800 } });
  return context.newPage();
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Signs in by pasting the key, as a person does, and waits for the collections page. */
export async function signIn(page: Page, url: string, key: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('API key').fill(key);
  // Exact: the page also offers "Sign in with your organization".
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL(`${url}/collections`);
}
