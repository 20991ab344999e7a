import { configDefaults, defineConfig } from 'vitest/config';
import { browserTestPlan } from './test/support/chromium.ts';

// Without a Chromium the browser tests are left out of the run (not skipped inside, which would count them as passed);
// global-setup.ts says so at the end. ORGMEM_BROWSER_TESTS=required makes a missing Chromium an error here.
const browser = browserTestPlan();

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...browser.exclude],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Two cores: more workers only make the servers under test fight for CPU.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
