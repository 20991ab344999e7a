import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { rotateDropAddress } from '../src/services/email/addresses.ts';
import { dropAddressView } from './email.address.ts';

export default defineProcedure({
  name: 'email.rotateAddress',
  summary: 'Replace the drop address with a new token; mail to the old address is dropped from now on',
  rest: { method: 'POST', path: '/v1/memory/email/address/rotate', status: 200 },
  access: 'write',
  keyRole: 'admin',
  input: z.object({}),
  output: dropAddressView,
  handler: (ctx) => rotateDropAddress(ctx),
});
