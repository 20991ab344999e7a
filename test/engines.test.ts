import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

/**
 * package.json's `engines` is a promise about every package npm installs: on the Node versions it
 * claims (its lowest, and the one running the tests) no installed package may ask for another, as
 * npm ci would warn (EBADENGINE). The packages are those package-lock.json lists, read where they
 * are installed (a package for another platform, not installed here, is left out). A dependency
 * whose new major asks for a newer Node is pinned to the last one that does not in package.json's
 * `overrides`.
 */
const root = join(import.meta.dirname, '..');
const read = (path: string) => JSON.parse(readFileSync(join(root, path), 'utf8')) as { engines?: { node?: unknown } };

describe('engines', () => {
  it('every installed package runs on the Node versions package.json claims', () => {
    const claimed = read('package.json').engines?.node;
    expect(claimed).toEqual(expect.any(String));
    const versions = [semver.minVersion(claimed as string)!.version, process.versions.node];
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    const installed = Object.keys(lock.packages).filter((path) => path && existsSync(join(root, path, 'package.json')));
    expect(installed.length).toBeGreaterThan(100);
    const refusing = installed.flatMap((path) => {
      const wants = read(join(path, 'package.json')).engines?.node;
      if (typeof wants !== 'string') return [];
      const excluded = versions.filter((v) => !semver.satisfies(v, wants));
      return excluded.length ? [`${path} wants node ${wants}, not ${excluded.join(', ')}`] : [];
    });
    expect(refusing).toEqual([]);
  });
});
