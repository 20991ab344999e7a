import { createHmac } from 'node:crypto';
import { outboundFetch } from '../../ports/outbound-http.ts';
import type { TargetRule } from '../../ports/public-target.ts';

/** A try's whole exchange: short, since a receiver that hangs holds one of the workers meanwhile. */
export const WEBHOOK_TIMEOUT_MS = 5_000;

/** `sha256=<hex HMAC-SHA256 of the raw body>` keyed with the signing secret. */
export const signature = (secret: string, raw: string) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

/**
 * POSTs `body` and resolves with the status code. The whole exchange is bounded by the
 * 5 second timeout; redirects are not followed. Targets the rule refuses throw
 * PrivateTargetError, by literal address or by what the name resolves to.
 */
export async function postWebhook(url: string, body: string, headers: Record<string, string>, rule: TargetRule): Promise<number> {
  const res = await outboundFetch(rule)(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'orgmem-webhooks', ...headers },
    body,
    signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
  });
  await res.body?.cancel();
  return res.status;
}
