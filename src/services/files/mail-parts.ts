import type { AddressObject } from 'mailparser';

/**
 * What the mail drop uses of a message, read by mailparser in the bounded runner (parse-runner.ts):
 * plain data, so it crosses from the worker thread as it is. A message whose MIME structure
 * exhausts the runner's memory or time fails there, never in the API's thread.
 */
export interface MailParts {
  /** How many header lines it has: a message without one was not a message. */
  headerCount: number;
  subject: string | null;
  /** The From header as written (`Name <a@b>`). */
  fromText: string | null;
  /** The From and To header addresses, lowercased (group members included). */
  from: string[];
  to: string[];
  messageId: string | null;
  /** The Date header (ISO), when it is a date. */
  date: string | null;
  text: string | null;
  html: string | null;
  attachments: Array<{ filename: string | null; contentType: string; content: Uint8Array; related: boolean }>;
}

const addresses = (field: AddressObject | AddressObject[] | undefined) =>
  [field ?? []]
    .flat()
    .flatMap((a) => a.value)
    .flatMap((v) => v.group ?? [v])
    .map((v) => v.address?.toLowerCase())
    .filter((a): a is string => !!a);

export async function readMailParts(raw: Buffer | string): Promise<MailParts> {
  const { simpleParser } = await import('mailparser');
  // HTML is converted later with this service's options; cid images stay links, not data URIs.
  const mail = await simpleParser(raw, { skipHtmlToText: true, skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true });
  return {
    headerCount: mail.headers.size,
    subject: mail.subject ?? null,
    fromText: mail.from?.text || null,
    from: addresses(mail.from),
    to: addresses(mail.to),
    messageId: mail.messageId ?? null,
    date: mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date.toISOString() : null,
    text: mail.text ?? null,
    html: typeof mail.html === 'string' ? mail.html : null,
    attachments: mail.attachments.map((a) => ({ filename: a.filename ?? null, contentType: a.contentType, content: a.content, related: !!a.related })),
  };
}
