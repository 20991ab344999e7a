import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Which Chromium the dashboard's browser tests drive, and so whether `npm test` runs them.
 * vitest.config.ts decides from this at config time (a file left out is not run, so it cannot
 * count as passed), test/support/global-setup.ts prints the notice at the end of the run, and
 * test/support/browser.ts launches the Chromium found.
 */

/** The browser test files (test/web-*.test.ts), as paths from the project root. */
export const BROWSER_TEST_FILES = readdirSync(join(import.meta.dirname, '..'))
  .filter((name) => /^web-.*\.test\.ts$/.test(name))
  .sort()
  .map((name) => `test/${name}`);

/** Debian's package `chromium` installs it here (`.ci/run` does). */
const DEBIAN_CHROMIUM = '/usr/bin/chromium';

export type ChromiumSearch = { path: string } | { path: null; why: string };

const isExecutable = (path: string) => {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/** ORGMEM_CHROMIUM when set (and then only it), else Debian's /usr/bin/chromium, else `chromium` on PATH. */
export function findChromium(env: Record<string, string | undefined> = process.env): ChromiumSearch {
  const named = env.ORGMEM_CHROMIUM;
  if (named) return isExecutable(named) ? { path: named } : { path: null, why: `ORGMEM_CHROMIUM is ${named}, which is not an executable file` };
  if (isExecutable(DEBIAN_CHROMIUM)) return { path: DEBIAN_CHROMIUM };
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, 'chromium'))) return { path: join(dir, 'chromium') };
  }
  return { path: null, why: `no Chromium found (ORGMEM_CHROMIUM is unset, there is no ${DEBIAN_CHROMIUM} and no chromium on PATH)` };
}

export interface BrowserTestPlan {
  /** Files left out of the run. */
  exclude: string[];
  /** Printed at the end of a run that left them out: which, why, and how to run them. */
  notice: string | null;
}

/**
 * With a Chromium, every browser test runs. Without one they are left out with a notice, unless
 * ORGMEM_BROWSER_TESTS=required (CI), where a missing Chromium is an error that fails the run.
 */
export function browserTestPlan(env: Record<string, string | undefined> = process.env): BrowserTestPlan {
  const required = env.ORGMEM_BROWSER_TESTS;
  if (required !== undefined && required !== '' && required !== 'required') {
    throw new Error(`ORGMEM_BROWSER_TESTS is '${required}': set it to 'required' (a missing Chromium fails the run) or leave it unset`);
  }
  const found = findChromium(env);
  if (found.path !== null) return { exclude: [], notice: null };
  const files = BROWSER_TEST_FILES.map((f) => `  ${f}\n`).join('');
  const fix =
    "To run them, install Debian's chromium package (apt-get install chromium) or set ORGMEM_CHROMIUM to a Chromium executable; " +
    '`npm run test:browser` runs only them.\n';
  if (required) {
    throw new Error(`ORGMEM_BROWSER_TESTS=required, but the browser tests cannot run: ${found.why}. They are:\n${files}${fix}`);
  }
  return { exclude: BROWSER_TEST_FILES, notice: `\nBrowser tests NOT RUN (${BROWSER_TEST_FILES.length} files): ${found.why}.\n${files}${fix}` };
}
