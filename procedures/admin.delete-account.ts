import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { deleteAccount } from '../src/services/access/account.ts';

export default defineProcedure({
  name: 'admin.deleteAccount',
  summary: 'Irreversibly delete the account: memories, files, keys, configs; afterwards every key is 401',
  description: 'confirm must equal the tenant name exactly, else 400.',
  rest: { method: 'POST', path: '/v1/memory/admin/delete-account', status: 200 },
  access: 'write',
  keyRole: 'admin',
  errors: { BAD_REQUEST: 'confirm is not the exact name of the tenant' },
  input: z.object({ confirm: z.string().describe('The tenant name') }),
  output: z.object({ deleted: z.literal(true) }),
  handler: (ctx, input) => deleteAccount(ctx, input.confirm),
});
