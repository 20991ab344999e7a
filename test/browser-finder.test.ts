import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BROWSER_TEST_FILES, browserTestPlan, findChromium } from './support/chromium.ts';
import { ROOT, tempDirs } from './support/mcp.ts';

/**
 * Whether `npm test` runs the dashboard's browser tests: decided by test/support/chromium.ts at
 * config time. The machine running this has a Chromium, so its absence is made by pointing
 * ORGMEM_CHROMIUM at a path with nothing there, here and in a vitest started as `npm test` starts it.
 */
const dirs = tempDirs();
afterAll(() => dirs.removeAll());
const MISSING = '/nonexistent/orgmem-test/chromium';

/** An executable file named `chromium` (never started: the finder only looks for it). */
function fakeChromium(): string {
  const path = join(dirs.make('orgmem-chromium-'), 'chromium');
  writeFileSync(path, '#!/bin/sh\nexit 1\n');
  chmodSync(path, 0o755);
  return path;
}

/** vitest with `args`, from the project root, in the environment `npm test` gets plus `env`. */
function vitest(args: string[], env: Record<string, string>) {
  // Not this run's own variables (its worker ids, its database), which would confuse the child run.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('VITEST') && k !== 'TEST_DATABASE_URL'));
  const child = spawn(process.execPath, [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), ...args], {
    cwd: ROOT,
    env: { ...inherited, NO_COLOR: '1', FORCE_COLOR: '0', ORGMEM_BROWSER_TESTS: '', ...env },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise<{ code: number | null; out: string }>((resolve) => child.on('close', (code) => resolve({ code, out })));
}

describe('the Chromium finder', () => {
  it('takes ORGMEM_CHROMIUM when it names an executable file, and only it', () => {
    const fake = fakeChromium();
    expect(findChromium({ ORGMEM_CHROMIUM: fake, PATH: '' })).toEqual({ path: fake });
    expect(findChromium({ ORGMEM_CHROMIUM: MISSING })).toEqual({ path: null, why: `ORGMEM_CHROMIUM is ${MISSING}, which is not an executable file` });
    const plain = join(dirs.make('orgmem-chromium-'), 'chromium');
    writeFileSync(plain, 'not a program');
    expect(findChromium({ ORGMEM_CHROMIUM: plain }).path).toBeNull();
    expect(findChromium({ ORGMEM_CHROMIUM: dirs.make('orgmem-chromium-') }).path).toBeNull();
  });

  it("unset, takes Debian's /usr/bin/chromium, else chromium on PATH", () => {
    const onPath = fakeChromium();
    const debian = existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : null;
    expect(findChromium({ PATH: `/nonexistent:${join(onPath, '..')}` }).path).toBe(debian ?? onPath);
    expect(findChromium({ PATH: '/nonexistent' }).path).toBe(debian);
  });

  it('runs every browser test file when a Chromium is found, leaves them all out with a notice when none is, fails when one is required', () => {
    expect(browserTestPlan({ ORGMEM_CHROMIUM: fakeChromium() })).toEqual({ exclude: [], notice: null });
    expect(browserTestPlan({ ORGMEM_CHROMIUM: fakeChromium(), ORGMEM_BROWSER_TESTS: 'required' })).toEqual({ exclude: [], notice: null });
    const left = browserTestPlan({ ORGMEM_CHROMIUM: MISSING });
    expect(left.exclude).toEqual(BROWSER_TEST_FILES);
    for (const file of BROWSER_TEST_FILES) expect(left.notice).toContain(`  ${file}\n`);
    expect(left.notice).toContain(`Browser tests NOT RUN (${BROWSER_TEST_FILES.length} files): ORGMEM_CHROMIUM is ${MISSING}`);
    expect(left.notice).toContain("install Debian's chromium package");
    expect(left.notice).toContain('npm run test:browser');
    expect(() => browserTestPlan({ ORGMEM_CHROMIUM: MISSING, ORGMEM_BROWSER_TESTS: 'required' })).toThrow(
      /^ORGMEM_BROWSER_TESTS=required, but the browser tests cannot run: ORGMEM_CHROMIUM is /,
    );
    expect(() => browserTestPlan({ ORGMEM_CHROMIUM: fakeChromium(), ORGMEM_BROWSER_TESTS: 'yes' })).toThrow(
      /ORGMEM_BROWSER_TESTS is 'yes': set it to 'required'/,
    );
  });

  it('knows every browser test file: the test files that launch a browser, and only those', () => {
    const launching = readdirSync(join(ROOT, 'test'))
      .filter((f) => f.endsWith('.test.ts') && /^import .* from '\.\/support\/browser\.ts';$/m.test(readFileSync(join(ROOT, 'test', f), 'utf8')))
      .map((f) => `test/${f}`)
      .sort();
    expect(launching.length).toBeGreaterThan(0);
    expect(BROWSER_TEST_FILES).toEqual(launching);
  });
});

describe('npm test without a Chromium', () => {
  it('runs the other files, does not count the browser tests, and ends naming each one and how to run them', async () => {
    const run = await vitest(['run', 'test/locomo-evidence', 'test/web-'], { ORGMEM_CHROMIUM: MISSING });
    expect(run.code, run.out).toBe(0);
    expect(run.out).toMatch(/Test Files {2}1 passed \(1\)/);
    expect(run.out).not.toMatch(/✓ test\/web-|↓ test\/web-|skipped/);
    const notice = run.out.slice(run.out.indexOf('Browser tests NOT RUN'));
    expect(notice).toBe(browserTestPlan({ ORGMEM_CHROMIUM: MISSING }).notice!.trimStart());
    // The notice ends the run: after vitest's summary.
    expect(run.out.indexOf('Test Files')).toBeLessThan(run.out.indexOf('Browser tests NOT RUN'));
  }, 120_000);

  it('fails with ORGMEM_BROWSER_TESTS=required, saying why', async () => {
    const run = await vitest(['run', 'test/locomo-evidence'], { ORGMEM_CHROMIUM: MISSING, ORGMEM_BROWSER_TESTS: 'required' });
    expect(run.code).toBe(1);
    expect(run.out).toContain(
      `ORGMEM_BROWSER_TESTS=required, but the browser tests cannot run: ORGMEM_CHROMIUM is ${MISSING}, which is not an executable file`,
    );
    expect(run.out).not.toContain('passed');
  }, 60_000);

  it('with a Chromium found, the run has every browser test file', async () => {
    const run = await vitest(['list', '--filesOnly', 'test/web-'], { ORGMEM_CHROMIUM: fakeChromium() });
    expect(run.code, run.out).toBe(0);
    expect(
      run.out
        .trim()
        .split('\n')
        .filter((l) => l.startsWith('test/')),
    ).toEqual(BROWSER_TEST_FILES);
  }, 60_000);
});
