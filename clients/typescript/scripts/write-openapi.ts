// Writes openapi.json, the document the package's REST types are generated from: the one the
// server of this checkout serves at /openapi.json. It is committed so that the package builds
// from its own directory and a change of the API shows as a diff; test/client-package.test.ts
// fails while it differs from what the server serves (run `npm run openapi` here to update it).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument } from '../../../rest-adapter/openapi.ts';

writeFileSync(join(import.meta.dirname, '..', 'openapi.json'), `${JSON.stringify(openApiDocument(), null, 2)}\n`);
