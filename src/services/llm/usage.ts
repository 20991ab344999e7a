import type { App } from '../../context.ts';
import { newId } from '../../ids.ts';
import {
  chat,
  complete,
  transcribe,
  type ChatOptions,
  type ChatReply,
  type ChatRequest,
  type CompletionReply,
  type CompletionRequest,
  type LlmEndpoint,
  type LlmUsage,
  type TranscriptionReply,
  type TranscriptionRequest,
} from '../../ports/llm/llm.ts';

/** Who pays: the tenant's own endpoint ('tenant') is never capped; the other two are the operator's. */
export type LlmSource = 'tenant' | 'server' | 'platform';

/** A chat call whose usage is written down whether or not its content turns out usable. */
export async function recordedChat(
  app: App,
  tenantId: string,
  source: LlmSource,
  purpose: string,
  endpoint: LlmEndpoint,
  req: ChatRequest,
  opts: ChatOptions = { timeoutMs: app.config.llm.timeoutMs, maxRetries: app.config.llm.maxRetries },
): Promise<ChatReply> {
  const reply = await chat(endpoint, req, opts);
  await recordUsage(app, tenantId, source, purpose, endpoint, reply);
  return reply;
}

/** A caller's own completion request (the chat proxy, purpose `chat_proxy`), recorded like a chat call. */
export async function recordedCompletion(
  app: App,
  tenantId: string,
  source: LlmSource,
  endpoint: LlmEndpoint,
  req: CompletionRequest,
  opts: ChatOptions,
): Promise<CompletionReply> {
  const reply = await complete(endpoint, req, opts);
  await recordUsage(app, tenantId, source, 'chat_proxy', endpoint, reply);
  return reply;
}

/** A transcription (purpose `transcription`), recorded like a chat call so the spend cap sees it. */
export async function recordedTranscription(
  app: App,
  tenantId: string,
  source: LlmSource,
  endpoint: LlmEndpoint,
  req: TranscriptionRequest,
  opts: ChatOptions,
): Promise<TranscriptionReply> {
  const reply = await transcribe(endpoint, req, opts);
  await recordUsage(app, tenantId, source, 'transcription', endpoint, reply);
  return reply;
}

async function recordUsage(app: App, tenantId: string, source: LlmSource, purpose: string, endpoint: LlmEndpoint, usage: LlmUsage): Promise<void> {
  await app.db.query(
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
  const [row] = await app.db.query<{ usd: number }>(
    `select coalesce(sum(cost_usd), 0)::float8 as usd from llm_usage
      where tenant_id = $1 and source <> 'tenant' and at >= date_trunc('month', now() at time zone 'UTC') at time zone 'UTC'`,
    [tenantId],
  );
  return row!.usd;
}
