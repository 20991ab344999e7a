import type { App, AuthedCtx } from '../../core/context.ts';
import { AppError, badRequest } from '../../core/errors.ts';
import { MAX_FILES, type FileUpload } from '../../schemas/files.ts';
import { actFor, type Acting } from '../access/grants.ts';
import { chunkText } from '../files/chunk.ts';
import { dropLater } from '../files/drop.ts';
import type { MailParts } from '../files/mail-parts.ts';
import { parseDocument, parseMail } from '../files/parse-runner.ts';
import { FileLimitError } from '../files/unreadable.ts';
import { insertMemories } from '../memory/memories.ts';
import { facetsSql, metadataFacets } from '../memory/memory-view.ts';
import { storable } from '../memory/storable.ts';
import { findDropTargets } from './addresses.ts';
import { senderAllowed } from './senders.ts';

/** A message handed over by the MTA (HTTP) or received by the built-in SMTP listener. */
export interface InboundMail {
  /** Envelope recipients; the drop address among them names the tenant. */
  to: string[];
  /** Envelope sender (MAIL FROM); empty for bounces. */
  from: string;
  /** The RFC 822 message. */
  raw: Buffer;
}

/** Memory text limit: the header lines and the body share it. */
const MAX_TEXT = 10_000;
/** RFC 5322's line limit: a longer subject or From is cut, so the body keeps most of the text. */
const MAX_HEADER = 998;
/** Header To addresses kept in metadata (which is at most 16 KiB). */
const MAX_TO = 20;
/** Skipped attachments listed in metadata, each name cut to 100 characters (the count says how many in all). */
const MAX_SKIPPED_LISTED = 50;

/**
 * The `raw` of the HTTP handoff: base64, possibly wrapped in lines (`base64` without `-w0`).
 * Anything else is the MTA's bug, answered 400 whatever the address.
 */
export function decodeRawMail(raw: string): Buffer {
  const compact = raw.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) throw badRequest('raw must be the RFC 822 message encoded as base64');
  return Buffer.from(compact, 'base64');
}

/**
 * The message's parts, read by mailparser in the bounded runner (a MIME structure built to exhaust
 * memory or time fails there, a 422 naming the limit, never in the API's thread).
 */
async function parse(app: App, raw: Buffer): Promise<MailParts> {
  let parsed: MailParts;
  try {
    parsed = await parseMail(raw, app.config.parse);
  } catch (err) {
    if (err instanceof FileLimitError) throw new AppError('UNPROCESSABLE_CONTENT', `The message was not read: ${err.message}`);
    throw badRequest(`raw cannot be parsed as a mail message: ${(err as Error).message}`);
  }
  // mailparser reads anything; a message without a single header was not a message.
  if (parsed.headerCount === 0) throw badRequest('raw is not an RFC 822 message (it has no headers)');
  return parsed;
}

/** `Name <local@domain>` or `<local@domain>` or `local@domain`, lowercased; null without an `@`. */
function addressOf(s: string): { local: string; domain: string } | null {
  const bare = (/<([^<>]*)>/.exec(s)?.[1] ?? s).trim().toLowerCase();
  const at = bare.lastIndexOf('@');
  return at > 0 ? { local: bare.slice(0, at), domain: bare.slice(at + 1) } : null;
}

/** The tokens of the recipients at the drop domain (a token is only letters and digits, so others cannot match). */
function dropTokens(app: App, to: string[]): string[] {
  const tokens = to.map(addressOf).filter((a) => a?.domain === app.config.email.domain && /^[a-z0-9]{20,64}$/.test(a.local));
  return [...new Set(tokens.map((a) => a!.local))];
}

/**
 * The body as text: the plain part, else the HTML part read by the bounded runner, links kept. An
 * HTML body over a reading limit (nesting, size, time) refuses the message with a 422 naming it,
 * whatever its recipients, so the answer tells nothing about which addresses exist.
 */
async function bodyText(app: App, parsed: MailParts): Promise<string> {
  let text = parsed.text?.trim() ?? '';
  if (!text && parsed.html !== null) {
    try {
      text = (await parseDocument('mail-html', parsed.html, app.config.parse)).text.trim();
    } catch (err) {
      if (err instanceof FileLimitError) throw new AppError('UNPROCESSABLE_CONTENT', `The message's HTML body was not read: ${err.message}`);
      throw badRequest(`The message's HTML body cannot be read: ${(err as Error).message}`);
    }
  }
  return storable(text.replace(/\r\n?/g, '\n'));
}

/**
 * The memory of one message (docs/contract.md, "Email drop"): `Subject: …\nFrom: …\n\n<body>`, the body cut at a
 * boundary so the whole fits 10,000 characters (metadata `truncated: true` then).
 */
function mailMemory(parsed: MailParts, bodyRead: string, envelopeFrom: string, receivedAt: Date) {
  const subject = parsed.subject ? storable(parsed.subject.slice(0, MAX_HEADER)) : null;
  const fromAddress = parsed.from[0] ?? (envelopeFrom || null);
  const fromShown = storable((parsed.fromText || envelopeFrom || '(unknown sender)').slice(0, MAX_HEADER));
  const head = `Subject: ${subject ?? '(no subject)'}\nFrom: ${fromShown}`;
  let body = bodyRead;
  const room = MAX_TEXT - head.length - 2;
  const truncated = body.length > room;
  // Only the first chunk is kept, so only the text it can come from is chunked (a body may be megabytes).
  if (truncated) body = chunkText(body.slice(0, 2 * room), room)[0]!;
  return {
    text: body ? `${head}\n\n${body}` : head,
    metadata: {
      from: fromAddress ? storable(fromAddress) : null,
      to: parsed.to.slice(0, MAX_TO).map(storable),
      subject,
      message_id: parsed.messageId ? storable(parsed.messageId.slice(0, MAX_HEADER)) : null,
      received_at: receivedAt.toISOString(),
      ...(truncated ? { truncated: true } : {}),
    } as Record<string, unknown>,
  };
}

/**
 * Attachments as drop files. Inline parts the HTML shows by cid (logos, signature images) are
 * the message's decoration, not its content, and are left out.
 */
function attachmentFiles(parsed: MailParts): FileUpload[] {
  return parsed.attachments
    .filter((a) => !a.related)
    .map((a, i) => ({
      filename: storable((a.filename ?? '').replace(/[\u0001-\u001f\u007f]/g, '').slice(0, 255)) || `attachment-${i + 1}`,
      content_type: a.contentType || 'application/octet-stream',
      data: a.content as Buffer,
    }));
}

/** The message's Date header as its event time (docs/time.md); a missing or unreadable one leaves it to the time of arrival. */
const sentAt = (parsed: MailParts) => parsed.date ?? undefined;

/** The same message delivered again (an MTA retry after a timeout) is stored once. */
async function alreadyStored(ctx: AuthedCtx, collection: string, messageId: unknown): Promise<boolean> {
  if (typeof messageId !== 'string') return false;
  const rows = await ctx.app.db.query(
    `select 1 from memories m where m.tenant_id = $1 and m.collection = $2 and m.source = 'email' and ${facetsSql('m')} @> $3::jsonb limit 1`,
    [ctx.tenant.id, collection, metadataFacets(ctx.tenant.id, { message_id: messageId })],
  );
  return rows.length > 0;
}

async function store(ctx: AuthedCtx, collection: string, parsed: MailParts, body: string, envelopeFrom: string) {
  const memory = mailMemory(parsed, body, envelopeFrom, new Date());
  if (await alreadyStored(ctx, collection, memory.metadata.message_id)) {
    return ctx.app.log.info(
      { tenant: ctx.tenant.id, collection, message_id: memory.metadata.message_id, requestId: ctx.requestId },
      'inbound mail already stored',
    );
  }
  const [embedding] = await ctx.app.embedder.embed([memory.text]);
  const files = attachmentFiles(parsed);
  // Attachments are stored and queued before the mail's memory: if the insert then fails, the
  // MTA retries and the message is stored whole; the other way round, a retry would be taken for
  // a duplicate and the attachments lost.
  const batch = files.length ? await dropLater(ctx, collection, files.slice(0, MAX_FILES), 'email') : null;
  if (batch) memory.metadata.batch_id = batch.batch_id;
  // Attachments not queued are told on the mail's memory (docs/email.md): too large, or past the limit of a message.
  const skipped = [
    ...(batch?.failed ?? []).map((f) => ({ filename: f.filename, reason: f.detail })),
    ...files.slice(MAX_FILES).map((f) => ({ filename: f.filename, reason: `More than ${MAX_FILES} attachments in the message` })),
  ];
  if (skipped.length) {
    memory.metadata.attachments_skipped = skipped.slice(0, MAX_SKIPPED_LISTED).map((f) => ({ ...f, filename: f.filename.slice(0, 100) }));
    memory.metadata.attachments_skipped_count = skipped.length;
  }
  const [stored] = await ctx.app.db.transaction((tx) =>
    insertMemories(
      tx,
      ctx,
      collection,
      [{ text: memory.text, importance: 0.5, category: 'email', source: 'email', metadata: memory.metadata, container_tag: null, observed_at: sentAt(parsed) }],
      [embedding!],
      { trust: 'mail' },
    ),
  );
  ctx.app.log.info(
    {
      tenant: ctx.tenant.id,
      collection,
      memory: stored!.id,
      attachments: batch && { batch: batch.batch_id, queued: batch.queued, skipped: skipped.length },
      requestId: ctx.requestId,
    },
    'inbound mail stored',
  );
}

/**
 * Mail is stored by the tenant's "email" service identity (created_by `{id: null, label: "email"}`)
 * into its drop address's collection.
 */
const delivery: Acting<{ tenant_id: string; collection: string }> = {
  subject: async (_app, target) => ({ actor: { service: 'email' }, collection: target.collection }),
  grant: { field: 'collection', permission: 'write' },
};

/**
 * Delivers a message to every tenant whose current drop address is among the envelope
 * recipients, when its sender is allowed there. Mail to an unknown address or from a sender not
 * allowed is dropped with only a log line for the operator: the caller's answer is the same
 * either way, so the endpoint tells nobody which addresses exist or who may send.
 *
 * The sender checked is the header From address (what the tenant sees and lists; the envelope
 * sender is often a bounce address of the sending service), or the envelope sender when the
 * message has no From. Neither is authenticated here: SPF, DKIM and DMARC are the MTA's to
 * enforce, and the unguessable token is what keeps strangers out.
 */
export async function receiveMail(app: App, mail: InboundMail, requestId: string): Promise<void> {
  if (mail.raw.length > app.config.email.maxBytes) {
    throw new AppError('PAYLOAD_TOO_LARGE', `The message is larger than ${app.config.email.maxBytes} bytes`);
  }
  const parsed = await parse(app, mail.raw);
  const body = await bodyText(app, parsed);
  const targets = await findDropTargets(app.platform, dropTokens(app, mail.to));
  const envelope = addressOf(mail.from);
  const envelopeFrom = envelope ? `${envelope.local}@${envelope.domain}` : '';
  const sender = parsed.from[0] ?? envelopeFrom;
  const log = { to: mail.to, from: sender, envelope_from: mail.from, message_id: parsed.messageId, requestId };
  if (!targets.length) return app.log.info({ ...log, reason: 'unknown address' }, 'inbound mail dropped');
  for (const target of targets) {
    const acted = await actFor(app, delivery, target, requestId);
    if (!acted) continue;
    if ('refused' in acted) {
      app.log.info({ ...log, tenant: target.tenant_id, reason: acted.refused }, 'inbound mail dropped');
      continue;
    }
    const { ctx } = acted;
    if (!sender || !(await senderAllowed(app.platform, ctx.tenant, sender))) {
      app.log.info({ ...log, tenant: ctx.tenant.id, reason: 'sender not allowed' }, 'inbound mail dropped');
      continue;
    }
    await store(ctx, target.collection, parsed, body, envelopeFrom);
  }
}
