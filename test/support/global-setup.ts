import type { TestProject } from 'vitest/node';
import { buildIfStale } from './build.ts';
import { browserTestPlan } from './chromium.ts';
import { startServer, type TestServer } from './server.ts';

let server: TestServer | undefined;

/** One server for the files that need no special configuration; each test makes its own tenant. */
export async function setup(project: TestProject) {
  // Tests that spawn bin/orgmem.js run the compiled CLI.
  buildIfStale('build:js');
  // Servers under test serve the dashboard from its build, which the browser tests open.
  buildIfStale('build:web');
  server = await startServer();
  project.provide('baseUrl', server.url);
  project.provide('adminKey', server.adminKey);
}

export async function teardown() {
  // Last, after vitest's summary: the browser test files vitest.config.ts left out of this run, and how to run them.
  const { notice } = browserTestPlan();
  try {
    // vitest prints an error thrown here but would still exit 0; close() fails on broken contracts.
    await server?.close().catch((err) => {
      process.exitCode = 1;
      throw err;
    });
  } finally {
    if (notice) process.stdout.write(notice);
  }
}
