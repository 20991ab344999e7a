#!/usr/bin/env node
// Runs the compiled CLI: loading the TypeScript sources through tsx took seconds per call.
import { existsSync } from 'node:fs';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('orgmem: the compiled CLI (dist/cli.js) is missing: run `npm run build` in the orgmem directory.\n');
  process.exit(1);
}
await import(cli.href);
