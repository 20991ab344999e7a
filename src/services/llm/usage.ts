import type { App } from '../../core/context.ts';
import { newId } from '../../core/ids.ts';
import type { ChatOptions, LlmEndpoint, LlmUsage } from '../../ports/llm/llm.ts';

/** Who pays: the tenant's own endpoint ('tenant') is never capped; the other two are the operator's. */
export type LlmSource = 'tenant' | 'server' | 'platform';

/** The timeout and retries of the service's own LLM calls. */
export const llmOptions = (app: App): ChatOptions => ({ timeoutMs: app.config.llm.timeoutMs, maxRetries: app.config.llm.maxRetries });

/**
 * One call to an endpoint (a chat, a caller's completion, a transcription), its usage written
 * down under `purpose` whether or not its content turns out usable, so the spend cap sees it.
 */
export async function recorded<R extends LlmUsage>(
  app: App,
  tenantId: string,
  source: LlmSource,
  purpose: string,
  endpoint: LlmEndpoint,
  call: Promise<R>,
): Promise<R> {
  const reply = await call;
  await recordUsage(app, tenantId, source, purpose, endpoint, reply);
  return reply;
}

export async function recordUsage(app: App, tenantId: string, source: LlmSource, purpose: string, endpoint: LlmEndpoint, usage: LlmUsage): Promise<void> {
  await app.platform.query(
    `insert into llm_usage (tenant_id, id, purpose, source, model, prompt_tokens, completion_tokens, cost_usd, latency_ms)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [tenantId, newId(), purpose, source, usage.model, usage.promptTokens, usage.completionTokens, costUsd(app, endpoint, usage), usage.latencyMs],
  );
}

/**
 * Estimated from the configured price table (USD per million tokens), by the model the endpoint
 * reports, else the one configured (a dated variant such as gpt-4o-mini-2024-07-18), else `*`.
 */
function costUsd(app: App, endpoint: LlmEndpoint, reply: LlmUsage): number {
  const prices = app.config.llm.prices;
  const price = prices[reply.model] ?? prices[endpoint.model] ?? prices['*'] ?? { prompt: 0, completion: 0 };
  return (reply.promptTokens * price.prompt + reply.completionTokens * price.completion) / 1_000_000;
}

/** What the operator's endpoints cost this tenant since the start of the calendar month (UTC). */
export async function operatorSpendThisMonth(app: App, tenantId: string): Promise<number> {
  const [row] = await app.platform.query<{ usd: number }>(
    `select coalesce(sum(cost_usd), 0)::float8 as usd from llm_usage
      where tenant_id = $1 and source <> 'tenant' and at >= date_trunc('month', now() at time zone 'UTC') at time zone 'UTC'`,
    [tenantId],
  );
  return row!.usd;
}
