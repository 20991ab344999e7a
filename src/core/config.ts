import { isIP } from 'node:net';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import { connectorUrls, oauthApps, providers, type OAuthProvider } from '../schemas/providers/index.ts';
import { MAX_FILE_BYTES } from '../schemas/files.ts';
import type { OAuthAppSpec } from '../schemas/providers/provider.ts';

/** An IP address, or a network as address/prefix length (10.1.2.0/24, fd00::/8). */
function isNetwork(v: string): boolean {
  const [address = '', prefix, ...rest] = v.split('/');
  const family = isIP(address);
  if (!family || rest.length) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/** A host as a Host header names it, its port optional: a name or IPv4 address, or an IPv6 one in brackets. */
export interface HostPort {
  host: string;
  port?: number;
}

/** `name[:port]` or `[v6]:port`, lowercased, or null: what ORGMEM_ALLOWED_HOSTS lists and a Host header holds. */
export function parseHostPort(v: string): HostPort | null {
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(v.trim().toLowerCase());
  if (!m || (m[1]!.startsWith('[') && isIP(m[1]!.slice(1, -1)) !== 6) || Number(m[2] ?? 0) > 65535) return null;
  return m[2] === undefined ? { host: m[1]! } : { host: m[1]!, port: Number(m[2]) };
}

/**
 * Every environment variable the service reads, in one place (the connectors' are read from
 * their providers' registry: `connectorEnv` below). The README's configuration table is written
 * from this list; keep them together.
 */
export const tierLimits = z.object({
  rate_limit_per_minute: z.number().int().positive(),
  max_memories: z.number().int().positive().nullable(),
  max_collections: z.number().int().positive().nullable(),
  max_storage_bytes: z.number().int().positive().nullable(),
});
export type TierLimits = z.infer<typeof tierLimits>;

export const DEFAULT_TIERS: Record<string, TierLimits> = {
  free: { rate_limit_per_minute: 60, max_memories: 10_000, max_collections: 100, max_storage_bytes: 1_073_741_824 },
  pro: { rate_limit_per_minute: 600, max_memories: 1_000_000, max_collections: 10_000, max_storage_bytes: 107_374_182_400 },
  enterprise: { rate_limit_per_minute: 3_000, max_memories: null, max_collections: null, max_storage_bytes: null },
};

const llmPrice = z.object({ prompt: z.number().min(0), completion: z.number().min(0) });
export type LlmPrice = z.infer<typeof llmPrice>;

/**
 * USD per million tokens, for the usage report and the spend cap. `*` prices every model not
 * listed; a deployment whose LLM costs nothing (a local model) sets `{"*": {"prompt": 0, "completion": 0}}`.
 */
export const DEFAULT_LLM_PRICES: Record<string, LlmPrice> = {
  'gpt-4o-mini': { prompt: 0.15, completion: 0.6 },
  'gpt-4o': { prompt: 2.5, completion: 10 },
  'gpt-4.1-mini': { prompt: 0.4, completion: 1.6 },
  'gpt-4.1-nano': { prompt: 0.1, completion: 0.4 },
  'gpt-4.1': { prompt: 2, completion: 8 },
  '*': { prompt: 1, completion: 3 },
};

/**
 * The largest mail the drop takes (25 MiB, the usual provider limit). The inbound endpoint's body
 * limit is sized for it, so ORGMEM_EMAIL_MAX_BYTES may lower it but not raise it.
 */
export const MAX_EMAIL_BYTES = 25 * 1024 * 1024;

/**
 * How memories' embeddings are stored and indexed: the column's type, and the HNSW graph over it
 * or over binary codes of it with an exact re-rank on the column (docs/vectors.md).
 */
export const VECTOR_STORAGES = ['vector', 'halfvec', 'binary-halfvec', 'binary-vector'] as const;
export type VectorStorage = (typeof VECTOR_STORAGES)[number];

/** The embedders (ORGMEM_EMBEDDER): the bundled model, an OpenAI-compatible endpoint, word hashing for tests and benchmarks. */
const EMBEDDERS = ['local', 'openai', 'hash'] as const;

/**
 * The storage of a deployment that sets none: the lowest cost that keeps the graph's recall@10
 * at 0.98 or more against exact search at a million memories (docs/vectors.md, "The default, and why"). On a
 * real model's dense vectors that is the binary graph re-ranked on halfvec; the hash embedder's
 * sparse vectors lose their neighbourhoods to one bit a dimension, so it keeps the halfvec graph.
 * Not the database's kind: on the embedded PGlite the binary graph is the cheaper one too, to
 * search at that recall and far more to write (measured at 100,000, same section).
 */
export const defaultStorage = (embedder: (typeof EMBEDDERS)[number]): VectorStorage => (embedder === 'hash' ? 'halfvec' : 'binary-halfvec');

const bool = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');

const env = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  DATABASE_URL: z.string().optional(),
  ORGMEM_DATA_DIR: z.string().optional(),
  ORGMEM_DB_POOL: z.coerce.number().int().positive().default(10),
  ORGMEM_TENANT_DB_POOL: z.coerce.number().int().positive().default(3),
  ORGMEM_TENANT_DB_MAX_POOLS: z.coerce.number().int().positive().default(50),
  ORGMEM_TENANT_DB_IDLE_SECONDS: z.coerce.number().int().positive().default(300),
  ORGMEM_EMBEDDER: z.enum(EMBEDDERS).optional(),
  ORGMEM_EMBEDDINGS_BASE_URL: z.string().url().optional(),
  ORGMEM_EMBEDDINGS_MODEL: z.string().default('text-embedding-3-small'),
  ORGMEM_EMBEDDINGS_API_KEY: z.string().default(''),
  ORGMEM_EMBEDDINGS_DIMENSIONS: z.coerce.number().int().positive().default(512),
  ORGMEM_EMBEDDER_THREADS: z.coerce.number().int().positive().max(16).optional(),
  ORGMEM_PUBLIC_URL: z.string().url().optional(),
  // The Host headers OAuth answers to without ORGMEM_PUBLIC_URL (src/core/oauth-urls.ts); unset, the loopback names and HOST.
  ORGMEM_ALLOWED_HOSTS: z
    .string()
    .optional()
    // Empty is unset: the default.
    .transform((v) => {
      const hosts = v
        ?.split(',')
        .map((h) => h.trim())
        .filter(Boolean);
      return hosts?.length ? hosts : undefined;
    })
    .pipe(z.array(z.string().refine((h) => parseHostPort(h) !== null, 'must be a comma-separated list of host or host:port ([::1]:8080 for IPv6)')).optional()),
  ORGMEM_TIERS: z.string().optional(),
  ORGMEM_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ORGMEM_WORKER_CONCURRENCY: z.coerce.number().int().positive().default(4),
  ORGMEM_WORKER_HEARTBEAT_SECONDS: z.coerce.number().positive().default(10),
  ORGMEM_SYNC_DROP_RESUME_SECONDS: z.coerce.number().positive().default(600),
  ORGMEM_PRODUCTION: bool.default(false),
  ORGMEM_LLM_BASE_URL: z.string().url().optional(),
  ORGMEM_LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  ORGMEM_LLM_API_KEY: z.string().default(''),
  ORGMEM_PLATFORM_LLM_BASE_URL: z.string().url().optional(),
  ORGMEM_PLATFORM_LLM_MODEL: z.string().min(1).default('gpt-4o-mini'),
  ORGMEM_PLATFORM_LLM_API_KEY: z.string().optional(),
  ORGMEM_ANTHROPIC_BASE_URL: z.string().url().optional(),
  ORGMEM_ANTHROPIC_API_KEY: z.string().default(''),
  ORGMEM_LLM_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  ORGMEM_LLM_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  ORGMEM_LLM_PRICES: z.string().optional(),
  ORGMEM_TRANSCRIPTION_MODEL: z.string().min(1).default('whisper-1'),
  ORGMEM_SEARCH_CACHE_MB: z.coerce.number().min(0).default(64),
  ORGMEM_QUERY_EMBEDDING_CACHE: z.coerce.number().int().min(0).default(10_000),
  ORGMEM_SEARCH_TEXT_CAP: z.coerce.number().int().min(50).default(1000),
  ORGMEM_SEARCH_EXACT_MAX: z.coerce.number().int().min(0).optional(),
  ORGMEM_GRAPH_FROM: z.coerce.number().int().min(0).default(10_000),
  ORGMEM_VECTOR_STORAGE: z.enum(VECTOR_STORAGES).optional(),
  // The graph's build parameters (unset: the storage's defaults) and its search's (docs/vectors.md).
  ORGMEM_VECTOR_M: z.coerce.number().int().min(2).max(100).optional(),
  ORGMEM_VECTOR_EF_CONSTRUCTION: z.coerce.number().int().min(4).max(1000).optional(),
  ORGMEM_VECTOR_EF_SEARCH: z.coerce.number().int().min(10).max(1000).default(100),
  ORGMEM_VECTOR_RERANK: z.coerce.number().int().min(1).max(64).default(50),
  ORGMEM_AUTO_ANALYZE: bool.default(true),
  ORGMEM_LEDGER_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
  ORGMEM_PERSONAL_CAPTURE: bool.default(true),
  ORGMEM_METRICS: bool.default(true),
  ORGMEM_MASTER_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes, base64-encoded (openssl rand -base64 32)')
    .optional(),
  // Access, account and events (docs/access.md).
  ORGMEM_RATE_LIMIT: bool.default(true),
  ORGMEM_RATE_LIMIT_WINDOW_SECONDS: z.coerce.number().int().positive().default(60),
  ORGMEM_SIGNUP_PER_IP_PER_HOUR: z.coerce.number().int().positive().default(10),
  ORGMEM_SIGNUP_PER_EMAIL_PER_HOUR: z.coerce.number().int().positive().default(3),
  ORGMEM_PULSE_PER_IP: z.coerce.number().int().positive().default(60),
  ORGMEM_OAUTH_REGISTER_PER_IP_PER_HOUR: z.coerce.number().int().positive().default(600),
  ORGMEM_PULSE_WINDOW_SECONDS: z.coerce.number().int().positive().default(60),
  ORGMEM_SMTP_URL: z.string().url().optional(),
  ORGMEM_MAIL_FROM: z.string().default('orgmem <no-reply@localhost>'),
  ORGMEM_WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  // Production mode's exceptions for an operator's own services (src/ports/public-target.ts).
  ORGMEM_ALLOW_PRIVATE_NETWORKS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().refine(isNetwork, 'must be a comma-separated list of IP addresses and CIDR networks such as 10.1.2.0/24'))),
  // Email drop (docs/contract.md, "Email drop").
  ORGMEM_EMAIL_DOMAIN: z
    .string()
    .regex(/^[A-Za-z0-9.-]+$/, 'must be a domain name')
    .default('localhost'),
  ORGMEM_INBOUND_SECRET: z.string().min(16, 'must be at least 16 characters (openssl rand -hex 32)').optional(),
  // The internal embed endpoint's X-Internal-Secret; unset, it answers 401 to everyone.
  ORGMEM_INTERNAL_SECRET: z.string().min(16, 'must be at least 16 characters (openssl rand -hex 32)').optional(),
  ORGMEM_INBOUND_SMTP_HOST: z.string().default('127.0.0.1'),
  ORGMEM_INBOUND_SMTP_PORT: z.coerce.number().int().min(0).max(65535).default(2525),
  ORGMEM_EMAIL_MAX_BYTES: z.coerce.number().int().positive().max(MAX_EMAIL_BYTES).default(MAX_EMAIL_BYTES),
  // Files (docs/architecture.md, services/storage): a directory, or the platform's S3 bucket when one is named.
  ORGMEM_FILES_DIR: z.string().optional(),
  ORGMEM_S3_BUCKET: z.string().min(1).optional(),
  ORGMEM_S3_ENDPOINT: z.string().url().optional(),
  ORGMEM_S3_REGION: z.string().min(1).default('us-east-1'),
  ORGMEM_S3_ACCESS_KEY_ID: z.string().default(''),
  ORGMEM_S3_SECRET_ACCESS_KEY: z.string().default(''),
  ORGMEM_S3_FORCE_PATH_STYLE: bool.optional(),
  // Reading files (docs/configuration.md, "Reading files"): the bounded runner's limits.
  ORGMEM_PARSE_MAX_PAGES: z.coerce.number().int().positive().default(2000),
  ORGMEM_PARSE_MAX_DEPTH: z.coerce.number().int().positive().default(500),
  ORGMEM_PARSE_MAX_UNZIPPED_MB: z.coerce.number().positive().default(256),
  // As many characters as the largest file has bytes: any text file that may be uploaded fits.
  ORGMEM_PARSE_MAX_CHARS: z.coerce.number().int().positive().default(MAX_FILE_BYTES),
  // 40 million pixels: a 48-megapixel phone camera's photo is past it, its usual 12-megapixel binned one well within.
  ORGMEM_PARSE_MAX_MEGAPIXELS: z.coerce.number().positive().default(40),
  ORGMEM_PARSE_MAX_MEMORY_MB: z.coerce.number().int().min(32).default(512),
  ORGMEM_PARSE_TIMEOUT_SECONDS: z.coerce.number().positive().default(60),
  ORGMEM_PARSE_CONCURRENCY: z.coerce.number().int().positive().default(2),
  // Managed connectors (docs/connectors.md): their variables come from the providers' registry (connectorEnv below).
  ORGMEM_DASHBOARD_URL: z.string().url().optional(),
  // Billing (docs/operations.md, "Billing"): Stripe's API and keys, and the price of each paid tier.
  ORGMEM_STRIPE_SECRET_KEY: z.string().min(1).optional(),
  ORGMEM_STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  // The client appends /v1/... itself, so only an origin can stand in for Stripe's.
  ORGMEM_STRIPE_API_URL: z
    .url({ protocol: /^https?$/ })
    // Checks go on after a failed one: an unparsable value is left to the URL check's message.
    .refine((v) => !URL.canParse(v) || new URL(v).pathname === '/', 'must be an origin without a path, e.g. https://api.stripe.com')
    .default('https://api.stripe.com'),
  ORGMEM_STRIPE_PRICES: z.string().optional(),
});

export type Config = ReturnType<typeof loadConfig>;

/**
 * The connectors' variables, read from the registry of providers (src/schemas/providers/index.ts)
 * rather than listed here: each API base and OAuth URL with the provider's own as its default,
 * and each OAuth app's client id and secret.
 */
const connectorEnv = z.object(
  Object.fromEntries<z.ZodType<string | undefined>>([
    ...connectorUrls.map((u) => [u.env, z.string().url().default(u.default)] as const),
    ...oauthApps.flatMap((a) => [a.clientId, a.clientSecret].map((name) => [name, z.string().optional()] as const)),
  ]),
);

export interface OAuthApp {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
}

/** A provider's OAuth app as the operator configured it; null when its client id or secret is unset. */
function oauthApp(vars: Record<string, string | undefined>, app: OAuthAppSpec): OAuthApp | null {
  const clientId = vars[app.clientId];
  const clientSecret = vars[app.clientSecret];
  return clientId && clientSecret
    ? { clientId, clientSecret, authorizeUrl: `${vars[app.authorize.env]}${app.authorize.path}`, tokenUrl: `${vars[app.token.env]}${app.token.path}` }
    : null;
}

/** A JSON variable's value, and `fail`, which stops the start naming the variable and what is wrong with it. */
function jsonVariable(name: string, json: string, example: string): { value: unknown; fail: (why: string) => never } {
  const fail = (why: string): never => {
    throw new Error(`Invalid configuration:\n  ${name}: ${why}`);
  };
  try {
    return { value: JSON.parse(json), fail };
  } catch {
    return fail(`not JSON; expected ${example}`);
  }
}

/**
 * ORGMEM_TIERS (docs/configuration.md): a built-in tier it names keeps the fields it does not
 * give; a tier it adds gives every field, so no tier has a limit nobody chose.
 */
function tiersFrom(json: string | undefined): Record<string, TierLimits> {
  if (!json) return DEFAULT_TIERS;
  const { value, fail } = jsonVariable('ORGMEM_TIERS', json, '{"tier": {"rate_limit_per_minute": 120, ...}}');
  const given = z.record(z.string(), z.record(z.string(), z.unknown())).safeParse(value);
  if (!given.success) return fail('expected an object of tiers, each an object of limits: {"free": {"rate_limit_per_minute": 120}}');
  const merged = Object.entries(given.data).map(([tier, fields]) => {
    const base = Object.hasOwn(DEFAULT_TIERS, tier) ? DEFAULT_TIERS[tier] : undefined;
    const missing = base ? [] : Object.keys(tierLimits.shape).filter((f) => !Object.hasOwn(fields, f));
    if (missing.length) return fail(`"${tier}" is a new tier and gives no ${missing.join(', ')}; a new tier gives every field`);
    const limits = tierLimits.strict().safeParse({ ...base, ...fields });
    if (!limits.success) return fail(limits.error.issues.map((i) => `${[tier, ...i.path].join('.')}: ${i.message}`).join('; '));
    return [tier, limits.data] as const;
  });
  return Object.fromEntries([...Object.entries(DEFAULT_TIERS), ...merged]);
}

/**
 * ORGMEM_STRIPE_PRICES: a price id per paid tier. The webhook reads a subscription's tier back
 * from its price, so a price may stand for one tier only, and only for a tier that has limits.
 */
function stripePrices(json: string | undefined, tiers: Record<string, TierLimits>): Record<string, string> {
  if (!json) return {};
  const { value, fail } = jsonVariable('ORGMEM_STRIPE_PRICES', json, '{"pro": "price_...", "enterprise": "price_..."}');
  const parsed = z.record(z.string(), z.string().min(1)).safeParse(value);
  if (!parsed.success) return fail('expected an object of price ids by tier, {"pro": "price_...", "enterprise": "price_..."}');
  for (const [tier, price] of Object.entries(parsed.data)) {
    if (tier === 'free' || !tiers[tier])
      fail(
        `"${tier}" is not a paid tier (tiers: ${Object.keys(tiers)
          .filter((t) => t !== 'free')
          .join(', ')})`,
      );
    if (Object.values(parsed.data).filter((p) => p === price).length > 1) fail(`${price} is the price of more than one tier`);
  }
  return parsed.data;
}

const home = (source: Record<string, string | undefined>) => source.HOME || homedir();

/**
 * The per-user data directory (XDG base directories): the same for `serve`, `mcp` and every
 * other command wherever they are started, so an MCP client launching `orgmem mcp` from its own
 * directory opens the data `orgmem serve` made. XDG_DATA_HOME counts only when absolute, as the
 * specification says.
 */
export function defaultDataDir(source: Record<string, string | undefined> = process.env): string {
  const xdg = source.XDG_DATA_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(home(source), '.local', 'share'), 'orgmem');
}

export function loadConfig(source: Record<string, string | undefined> = process.env) {
  const parsed = env.safeParse(source);
  const connectorVars = connectorEnv.safeParse(source);
  // pgvector builds no graph whose ef_construction is under 2 x m.
  const graph = parsed.data?.ORGMEM_VECTOR_EF_CONSTRUCTION !== undefined && parsed.data.ORGMEM_VECTOR_EF_CONSTRUCTION < 2 * (parsed.data.ORGMEM_VECTOR_M ?? 0);
  if (!parsed.success || !connectorVars.success || graph) {
    const issues = [
      ...(parsed.error?.issues ?? []),
      ...(connectorVars.error?.issues ?? []),
      ...(graph ? [{ path: ['ORGMEM_VECTOR_EF_CONSTRUCTION'], message: 'must be at least twice ORGMEM_VECTOR_M' }] : []),
    ];
    const lines = issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const c = connectorVars.data;
  // `memory://` is PGlite's in-memory database. A directory is made absolute here, once; a leading
  // `~` is expanded because the JSON configs of MCP clients pass it through unexpanded.
  const dataDir = e.ORGMEM_DATA_DIR?.startsWith('memory://')
    ? e.ORGMEM_DATA_DIR
    : resolve((e.ORGMEM_DATA_DIR || defaultDataDir(source)).replace(/^~(?=$|\/)/, home(source)));
  const embedder = e.ORGMEM_EMBEDDER ?? (e.ORGMEM_EMBEDDINGS_BASE_URL ? 'openai' : 'local');
  const tiers = tiersFrom(e.ORGMEM_TIERS);
  return {
    host: e.HOST,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    dataDir,
    dbPool: e.ORGMEM_DB_POOL,
    /** Tenants' own databases (services/tenant-db): connections per database, open pools per process, idle time before one is closed. */
    tenantDb: { pool: e.ORGMEM_TENANT_DB_POOL, maxPools: e.ORGMEM_TENANT_DB_MAX_POOLS, idleSeconds: e.ORGMEM_TENANT_DB_IDLE_SECONDS },
    embedder: {
      kind: embedder,
      baseUrl: e.ORGMEM_EMBEDDINGS_BASE_URL,
      model: e.ORGMEM_EMBEDDINGS_MODEL,
      apiKey: e.ORGMEM_EMBEDDINGS_API_KEY,
      dimensions: e.ORGMEM_EMBEDDINGS_DIMENSIONS,
      /** Worker threads of the bundled model (local only); unset, one a core up to 4. */
      threads: e.ORGMEM_EMBEDDER_THREADS,
    },
    publicUrl: e.ORGMEM_PUBLIC_URL,
    /** The Host headers that may name the OAuth issuer when publicUrl is unset (src/core/oauth-urls.ts); undefined: the default there. */
    allowedHosts: e.ORGMEM_ALLOWED_HOSTS?.map((h) => parseHostPort(h)!),
    tiers,
    logLevel: e.ORGMEM_LOG_LEVEL,
    workerConcurrency: e.ORGMEM_WORKER_CONCURRENCY,
    workerHeartbeatSeconds: e.ORGMEM_WORKER_HEARTBEAT_SECONDS,
    syncDropResumeSeconds: e.ORGMEM_SYNC_DROP_RESUME_SECONDS,
    production: e.ORGMEM_PRODUCTION,
    /** Planner statistics refreshed by the service after bulk writes and every minute (services/memory/table-stats.ts). */
    autoAnalyze: e.ORGMEM_AUTO_ANALYZE,
    /** Days the influence ledger keeps its entries (services/ledger/); 0: no ledger is written. */
    ledgerDays: e.ORGMEM_LEDGER_DAYS,
    /** A collection a person's hook capture or connection creates is personal to that person (docs/people.md, "Scopes"); off: org. */
    personalCapture: e.ORGMEM_PERSONAL_CAPTURE,
    /** Request and stage timings for the operator's metrics endpoints (src/ports/metrics.ts); off, nothing is recorded. */
    metrics: e.ORGMEM_METRICS,
    masterKey: e.ORGMEM_MASTER_KEY,
    llm: {
      // Extraction endpoints in the order after a tenant's own config: the server override, then the platform default.
      server: e.ORGMEM_LLM_BASE_URL ? { baseUrl: e.ORGMEM_LLM_BASE_URL, model: e.ORGMEM_LLM_MODEL, apiKey: e.ORGMEM_LLM_API_KEY } : null,
      platform:
        e.ORGMEM_PLATFORM_LLM_BASE_URL || e.ORGMEM_PLATFORM_LLM_API_KEY
          ? {
              baseUrl: e.ORGMEM_PLATFORM_LLM_BASE_URL ?? 'https://api.openai.com/v1',
              model: e.ORGMEM_PLATFORM_LLM_MODEL,
              apiKey: e.ORGMEM_PLATFORM_LLM_API_KEY ?? '',
            }
          : null,
      /** The Anthropic Messages API the Messages proxy forwards to (docs/proxy.md, "The upstream"); unset, that proxy answers 503. */
      anthropic: e.ORGMEM_ANTHROPIC_BASE_URL ? { baseUrl: e.ORGMEM_ANTHROPIC_BASE_URL, apiKey: e.ORGMEM_ANTHROPIC_API_KEY } : null,
      /** Sent to `/audio/transcriptions`: chat models do not transcribe, and `whisper-1` is the name OpenAI-compatible servers answer to. */
      transcriptionModel: e.ORGMEM_TRANSCRIPTION_MODEL,
      timeoutMs: e.ORGMEM_LLM_TIMEOUT_MS,
      maxRetries: e.ORGMEM_LLM_MAX_RETRIES,
      prices: e.ORGMEM_LLM_PRICES ? { ...DEFAULT_LLM_PRICES, ...z.record(z.string(), llmPrice).parse(JSON.parse(e.ORGMEM_LLM_PRICES)) } : DEFAULT_LLM_PRICES,
    },
    rateLimit: { enabled: e.ORGMEM_RATE_LIMIT, windowSeconds: e.ORGMEM_RATE_LIMIT_WINDOW_SECONDS },
    signupLimits: { perIpPerHour: e.ORGMEM_SIGNUP_PER_IP_PER_HOUR, perEmailPerHour: e.ORGMEM_SIGNUP_PER_EMAIL_PER_HOUR },
    /** The pageview beacon's budget per client address: a fixed window (docs/contract.md, "Rate limits"). */
    pulseLimit: { perIp: e.ORGMEM_PULSE_PER_IP, windowSeconds: e.ORGMEM_PULSE_WINDOW_SECONDS },
    /** OAuth client registrations per client address an hour: hosted MCP clients register from a few shared addresses (docs/mcp.md). */
    oauthRegisterPerIpPerHour: e.ORGMEM_OAUTH_REGISTER_PER_IP_PER_HOUR,
    mail: { smtpUrl: e.ORGMEM_SMTP_URL, from: e.ORGMEM_MAIL_FROM },
    /**
     * Which addresses a tenant-chosen target may have (webhooks, LLM endpoints, connectors,
     * buckets, databases): in production mode only public ones, besides the operator's networks.
     */
    targets: { publicOnly: e.ORGMEM_PRODUCTION && !e.ORGMEM_WEBHOOK_ALLOW_PRIVATE, allowedNetworks: e.ORGMEM_ALLOW_PRIVATE_NETWORKS },
    /** The X-Internal-Secret of POST /v1/memory/_internal/embed; unset, the endpoint answers 401 to everyone. */
    internalSecret: e.ORGMEM_INTERNAL_SECRET,
    /**
     * The X-Local-Admin-Secret of the local admin endpoints (procedures/internal.create-key.ts,
     * internal.create-tenant.ts). Never read from the environment: `orgmem serve` holding an embedded
     * data directory makes one per run and writes it there for the CLI (host/server-file.ts). Unset,
     * the endpoints answer 401 to everyone.
     */
    localAdminSecret: undefined as string | undefined,
    email: {
      /** Mail to `<token>@domain` lands in the token's tenant; compared lowercased. */
      domain: e.ORGMEM_EMAIL_DOMAIN.toLowerCase(),
      /** The X-Inbound-Secret of POST /v1/memory/email/inbound; unset, the endpoint answers 401 to everyone. */
      inboundSecret: e.ORGMEM_INBOUND_SECRET,
      smtpHost: e.ORGMEM_INBOUND_SMTP_HOST,
      smtpPort: e.ORGMEM_INBOUND_SMTP_PORT,
      /** Largest message accepted, in bytes (RFC 822 source, attachments included). */
      maxBytes: e.ORGMEM_EMAIL_MAX_BYTES,
    },
    storage: {
      /** The local store's directory; null: a temporary one for the process (an in-memory data dir). */
      dir: e.ORGMEM_FILES_DIR ?? (dataDir.startsWith('memory://') ? null : join(dataDir, 'files')),
      s3: e.ORGMEM_S3_BUCKET
        ? {
            bucket: e.ORGMEM_S3_BUCKET,
            endpoint: e.ORGMEM_S3_ENDPOINT,
            region: e.ORGMEM_S3_REGION,
            accessKeyId: e.ORGMEM_S3_ACCESS_KEY_ID,
            secretAccessKey: e.ORGMEM_S3_SECRET_ACCESS_KEY,
            // S3-compatible services behind an endpoint mostly want path-style addressing; AWS itself does not.
            forcePathStyle: e.ORGMEM_S3_FORCE_PATH_STYLE ?? !!e.ORGMEM_S3_ENDPOINT,
          }
        : null,
    },
    /** The bounded runner every heavy read goes through (src/services/files/parse-runner.ts) and its limits. */
    parse: {
      /** Pages of a PDF. */
      pages: e.ORGMEM_PARSE_MAX_PAGES,
      /** Nesting of HTML elements (a file's or a mail's). */
      depth: e.ORGMEM_PARSE_MAX_DEPTH,
      /** Bytes an office file's parts declare once unzipped, together. */
      unzippedBytes: Math.floor(e.ORGMEM_PARSE_MAX_UNZIPPED_MB * 1024 * 1024),
      /** Characters of text one file may give. */
      chars: e.ORGMEM_PARSE_MAX_CHARS,
      /** Pixels of an image, read from its header before OCR decodes it. */
      pixels: Math.floor(e.ORGMEM_PARSE_MAX_MEGAPIXELS * 1_000_000),
      /** A runner's heap. */
      memoryMb: e.ORGMEM_PARSE_MAX_MEMORY_MB,
      /** A read's deadline. */
      timeoutMs: Math.round(e.ORGMEM_PARSE_TIMEOUT_SECONDS * 1000),
      /** Reads at a time per process. */
      concurrency: e.ORGMEM_PARSE_CONCURRENCY,
    },
    connectors: {
      /** Each provider's API base, by provider (one on the tenant's own site has none: its connection's config names it). */
      apiUrls: Object.fromEntries(
        providers.flatMap((p): Array<[string, string]> => (p.sync.by === 'service' && 'env' in p.sync.api ? [[p.name, c[p.sync.api.env]!]] : [])),
      ),
      /** OAuth apps by provider; a provider whose app's client id or secret is unset answers 503 at OAuth start. gdrive and gmail share the Google app. */
      oauth: Object.fromEntries(providers.flatMap((p) => (p.oauth ? [[p.name, oauthApp(c, p.oauth.app)]] : []))) as Record<OAuthProvider, OAuthApp | null>,
      /** Where the OAuth callback sends the browser; unset, the server's own `/`. */
      dashboardUrl: e.ORGMEM_DASHBOARD_URL,
    },
    stripe: {
      /** Checkout and portal need the secret key, the webhook the signing secret; prices name what each paid tier costs. */
      secretKey: e.ORGMEM_STRIPE_SECRET_KEY,
      webhookSecret: e.ORGMEM_STRIPE_WEBHOOK_SECRET,
      apiUrl: e.ORGMEM_STRIPE_API_URL,
      prices: stripePrices(e.ORGMEM_STRIPE_PRICES, tiers),
    },
    search: {
      /** Exact-repeat search answers kept per process (LRU by size); 0 turns the cache off. */
      resultCacheBytes: Math.floor(e.ORGMEM_SEARCH_CACHE_MB * 1024 * 1024),
      /** Query embeddings kept per process (LRU, about 2 KiB each at 512 dimensions); 0 turns it off. */
      embeddingCacheEntries: e.ORGMEM_QUERY_EMBEDDING_CACHE,
      /** Full-text matches ranked per search at most (exact below it; see docs/search.md). */
      textRankCap: e.ORGMEM_SEARCH_TEXT_CAP,
      /** Up to this many memories in scope after filters, search reads them through the filter indexes (exact vector ranking, words checked per row); unset: a measured cost model decides (services/search/exact-cost.ts). */
      exactScanMax: e.ORGMEM_SEARCH_EXACT_MAX,
      /** A tenant's memories enter the vector graph once it holds this many (services/memory/graph-tenants.ts); 0: from its first. */
      graphFrom: e.ORGMEM_GRAPH_FROM,
      /** How embeddings are stored and the graph built (src/ports/db/vector-storage.ts); `orgmem vector-storage` applies it. */
      vectorIndex: { storage: e.ORGMEM_VECTOR_STORAGE ?? defaultStorage(embedder), m: e.ORGMEM_VECTOR_M, efConstruction: e.ORGMEM_VECTOR_EF_CONSTRUCTION },
      /** hnsw.ef_search of an unfiltered graph search: the candidates it keeps while walking. */
      efSearch: e.ORGMEM_VECTOR_EF_SEARCH,
      /** Candidates per result the binary graph hands to the exact re-rank. */
      rerank: e.ORGMEM_VECTOR_RERANK,
    },
  };
}
