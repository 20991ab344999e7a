import type { App, AuthedCtx } from '../../core/context.ts';
import { badRequest } from '../../core/errors.ts';
import { iso } from '../../core/ids.ts';
import { chat, LlmUnavailableError, type LlmEndpoint } from '../../ports/llm/llm.ts';
import { PrivateTargetError, targetRule } from '../../ports/public-target.ts';
import { recorded } from './usage.ts';

interface ConfigRow {
  provider: 'custom';
  base_url: string;
  model: string;
  api_key_sealed: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface ExtractionConfigInput {
  provider: 'custom';
  base_url: string;
  model: string;
  api_key?: string | null;
}

// The self-test answers the PUT, so it gets a short budget and no retries.
const SELF_TEST_TIMEOUT_MS = 15_000;

const load = async (app: App, tenantId: string) =>
  (await app.platform.query<ConfigRow>('select * from extraction_configs where tenant_id = $1', [tenantId]))[0];

const toEndpoint = (app: App, row: ConfigRow): LlmEndpoint => ({
  baseUrl: row.base_url,
  model: row.model,
  apiKey: row.api_key_sealed ? app.secrets.decrypt(row.api_key_sealed) : '',
  targets: targetRule(app.config),
});

/** The tenant's own endpoint, with its key unsealed, or null. */
export async function loadExtractionEndpoint(app: App, tenantId: string): Promise<LlmEndpoint | null> {
  const row = await load(app, tenantId);
  return row ? toEndpoint(app, row) : null;
}

/** The config without its key, and which endpoint extraction uses now. */
export async function getExtractionConfig(ctx: AuthedCtx) {
  const row = await load(ctx.app, ctx.tenant.id);
  const { server, platform } = ctx.app.config.llm;
  return {
    configured: !!row,
    provider: row?.provider ?? null,
    base_url: row?.base_url ?? null,
    model: row?.model ?? null,
    api_key_set: !!row?.api_key_sealed,
    created_at: iso(row?.created_at),
    updated_at: iso(row?.updated_at),
    source: row ? 'tenant' : server ? 'server' : platform ? 'platform' : 'none',
  } as const;
}

/** Saves the config only after a live one-token completion against it succeeds. */
export async function putExtractionConfig(ctx: AuthedCtx, input: ExtractionConfigInput) {
  const endpoint: LlmEndpoint = {
    baseUrl: input.base_url.replace(/\/+$/, ''),
    model: input.model,
    apiKey: input.api_key ?? '',
    targets: targetRule(ctx.app.config),
  };
  try {
    const opts = { timeoutMs: Math.min(SELF_TEST_TIMEOUT_MS, ctx.app.config.llm.timeoutMs), maxRetries: 0 };
    await recorded(
      ctx.app,
      ctx.tenant.id,
      'tenant',
      'self_test',
      endpoint,
      chat(endpoint, { messages: [{ role: 'user', content: 'Reply with OK.' }], maxTokens: 1 }, opts),
    );
  } catch (err) {
    if (err instanceof LlmUnavailableError && err.cause instanceof PrivateTargetError)
      throw badRequest(`The extraction endpoint is not allowed: ${err.message}`);
    if (err instanceof LlmUnavailableError) throw badRequest(`The extraction endpoint failed its self-test: ${err.message}`);
    throw err;
  }
  await ctx.app.platform.query(
    `insert into extraction_configs (tenant_id, provider, base_url, model, api_key_sealed) values ($1, $2, $3, $4, $5)
     on conflict (tenant_id) do update set provider = excluded.provider, base_url = excluded.base_url, model = excluded.model,
       api_key_sealed = excluded.api_key_sealed, updated_at = excluded.updated_at`,
    [ctx.tenant.id, input.provider, endpoint.baseUrl, endpoint.model, endpoint.apiKey ? ctx.app.secrets.encrypt(endpoint.apiKey) : null],
  );
  return getExtractionConfig(ctx);
}

/** Back to the server override or the platform default. Deleting no config is not an error. */
export async function deleteExtractionConfig(ctx: AuthedCtx): Promise<void> {
  await ctx.app.platform.query('delete from extraction_configs where tenant_id = $1', [ctx.tenant.id]);
}
