import { z } from 'zod';
import { defineProcedure } from '../src/pipeline/procedure.ts';
import { decodeRawMail, receiveMail } from '../src/services/email/inbound.ts';

const address = z.string().min(1).max(320);
/** The one answer to every accepted handoff, stored or dropped alike. */
const ACCEPTED = { detail: 'accepted' } as const;

export default defineProcedure({
  name: 'email.inbound',
  summary: 'Internal: the MTA hands over one received message (X-Inbound-Secret)',
  description:
    'For the mail server in front of the drop domain, not for clients. `raw` is the RFC 822 message, base64 (line breaks ' +
    'allowed). The message is stored for every tenant whose current drop address is among `to` and whose allowlist has ' +
    'its From address (the envelope `from` when it has none), as one memory (text "Subject: …\\nFrom: …\\n\\n<body>", ' +
    'category and source "email", metadata {from, to, subject, message_id, received_at, truncated?, batch_id?}) plus its ' +
    'attachments as an ingest batch. Unknown addresses and senders not allowed are dropped and logged, with the same 202 ' +
    'answer: no bounce tells anyone which addresses exist. The same message (Message-ID) is stored once.',
  rest: { method: 'POST', path: '/v1/memory/email/inbound', status: 202 },
  access: 'internal',
  secret: { header: 'X-Inbound-Secret', value: (config) => config.email.inboundSecret },
  errors: {
    BAD_REQUEST: 'raw is not base64, or not an RFC 822 message',
    PAYLOAD_TOO_LARGE: 'The message is larger than ORGMEM_EMAIL_MAX_BYTES (at most 25 MiB)',
    UNPROCESSABLE_CONTENT: 'The HTML body is over a reading limit (ORGMEM_PARSE_*: nesting, size, memory, time); the detail names it',
  },
  input: z.object({
    to: z
      .union([address, z.array(address).min(1).max(100)])
      .transform((to) => (typeof to === 'string' ? [to] : to))
      .describe('Envelope recipient(s): one address or an array of at most 100'),
    from: z.string().max(998).default('').describe('Envelope sender (MAIL FROM); empty for bounces'),
    raw: z.string().min(1).describe('The RFC 822 message, base64'),
  }),
  output: z.object({ detail: z.literal('accepted') }),
  handler: async (ctx, input) => {
    await receiveMail(ctx.app, { to: input.to, from: input.from, raw: decodeRawMail(input.raw) }, ctx.requestId);
    return ACCEPTED;
  },
});
