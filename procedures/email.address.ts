import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { getDropAddress } from '../src/services/email/addresses.ts';

/** The drop address as GET and rotate answer it. */
export const dropAddressView = z.object({
  address: z.string().describe('<token>@<drop domain>; the token is 24 lowercase letters and digits'),
  collection: z.string().describe('The collection received mail goes to'),
});

export default defineProcedure({
  name: 'email.address',
  summary: "The tenant's email drop address (created on first read) and its receiving collection",
  description:
    'Mail sent to the address from an allowed sender (see /v1/memory/email/senders) becomes one memory in the collection ' +
    '(category and source "email"), and each attachment is ingested there as in a drop. The local part is an unguessable ' +
    'token; rotate it when it leaks.',
  rest: { method: 'GET', path: '/v1/memory/email/address', status: 200 },
  access: 'read',
  input: z.object({}),
  output: dropAddressView,
  handler: (ctx) => getDropAddress(ctx),
});
