import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { importStatus } from '../src/schemas/memory.ts';
import { getImport } from '../src/services/memory/import.ts';

export default defineProcedure({
  name: 'admin.importStatus',
  summary: 'How far an import got: its state, records imported, skipped, already imported and pending, and why it failed',
  description:
    'By the import_id the import answered or the Idempotency-Key it was sent with. A queued or running import is being stored by its job ' +
    '(after a crash, the job resumes it by itself); a failed one says why in error: send the same body with the same key to resume it.',
  rest: { method: 'GET', path: '/v1/memory/admin/import/{import}', status: 200 },
  access: 'read',
  keyRole: 'admin',
  errors: { NOT_FOUND: 'No import of this tenant has this id or key' },
  input: z.object({ import: z.string().min(1).max(255).describe('The import_id, or the Idempotency-Key') }),
  output: importStatus,
  handler: (ctx, input) => getImport(ctx, input.import),
});
