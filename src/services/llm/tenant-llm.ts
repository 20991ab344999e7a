import { z } from 'zod';
import type { App } from '../../core/context.ts';
import {
  chat,
  complete,
  transcribe,
  type ChatRequest,
  type CompletionReply,
  type CompletionRequest,
  type LlmEndpoint,
  type LlmUsage,
} from '../../ports/llm/llm.ts';
import type { Upstream } from '../../ports/llm/upstream.ts';
import { loadExtractionEndpoint } from './extraction-config.ts';
import { isOverSpendCap } from './spend-cap.ts';
import { llmOptions, recorded, recordUsage, type LlmSource } from './usage.ts';

/** A named structured call (docs/llm-calls.md): the reply is JSON of `reply`'s shape. */
export interface StructuredCall<T> {
  name: string;
  system: string;
  /** The exact shape asked for; what is accepted back is the lenient version (see `parseReply`). */
  reply: z.ZodType<T>;
  /** The JSON schema sent as `response_format` (OpenAI strict mode), derived from `reply`. */
  wire: Record<string, unknown>;
}

/** `reply` must be built from `z.strictObject`s so the schema carries `additionalProperties: false`. */
export function defineCall<T>(name: string, system: string, reply: z.ZodType<T>): StructuredCall<T> {
  const { $schema: _drop, ...wire } = z.toJSONSchema(reply) as Record<string, unknown>;
  return { name, system, reply, wire };
}

/** The reply did not parse or validate, twice. Nothing was written on its account. */
export class LlmOutputError extends Error {}

export interface TenantLlm {
  source: LlmSource;
  model: string;
  /**
   * One structured call. A reply that is not JSON, fails `reply` (read leniently, see
   * `parseReply`), or fails `check` (which returns a reason, or null when the reply is usable) is
   * asked for once more; a second bad reply throws LlmOutputError. Every answered call is
   * recorded for usage and the spend cap.
   */
  call<T>(def: StructuredCall<T>, user: string, opts?: CallOptions<T>): Promise<T>;
  /** A few sentences describing an image, for search (purpose `caption`). */
  caption(image: Buffer, mime: string): Promise<string>;
  /** The words spoken in an audio or video file (purpose `transcription`). */
  transcribe(data: Buffer, filename: string, mime: string): Promise<string>;
  /**
   * A caller's own completion request, forwarded once (purpose `chat_proxy`): the caller's
   * client does its own retries, and retrying here too would multiply them.
   */
  complete(req: CompletionRequest): Promise<CompletionReply>;
  /** The endpoint as the proxies' raw line reaches it (ports/llm/upstream.ts), for a streamed completion. */
  upstream: Upstream;
  /** Writes down what a streamed completion used (purpose `chat_proxy`), as `complete` does for its own. */
  recordStreamed(usage: LlmUsage): Promise<void>;
}

const CAPTION_SYSTEM =
  'Describe this image for a search index: what it shows, what kind of image it is (photo, screenshot, chart, diagram, ' +
  'scanned page...), and the names, numbers and text in it that someone might search for. Answer in plain text, at most five sentences.';

export interface CallOptions<T> {
  check?: (reply: T) => string | null;
  /** Appended to the instructions: what varies per call, such as the current time. */
  note?: string;
}

export type LlmResolution = { llm: TenantLlm } | { llm: null; reason: 'none' | 'spend_cap' };

/**
 * The tenant's LLM: its own extraction config, else the server override, else the platform
 * default, else none. Over the spend cap, the operator's endpoints are withheld.
 */
export async function resolveLlm(app: App, tenantId: string): Promise<LlmResolution> {
  const own = await loadExtractionEndpoint(app, tenantId);
  if (own) return { llm: tenantLlm(app, tenantId, own, 'tenant') };
  const [endpoint, source] = app.config.llm.server
    ? [app.config.llm.server, 'server' as const]
    : app.config.llm.platform
      ? [app.config.llm.platform, 'platform' as const]
      : [null, null];
  if (!endpoint) return { llm: null, reason: 'none' };
  if (await isOverSpendCap(app, tenantId)) return { llm: null, reason: 'spend_cap' };
  return { llm: tenantLlm(app, tenantId, endpoint, source) };
}

function tenantLlm(app: App, tenantId: string, endpoint: LlmEndpoint, source: LlmSource): TenantLlm {
  return {
    source,
    model: endpoint.model,
    async call(def, user, { check, note } = {}) {
      const req: ChatRequest = {
        messages: [
          { role: 'system', content: note ? `${def.system}\n\n${note}` : def.system },
          { role: 'user', content: user },
        ],
        jsonSchema: { name: def.name, schema: def.wire },
      };
      let reason = '';
      for (let attempt = 1; attempt <= 2; attempt++) {
        const reply = await recorded(app, tenantId, source, def.name, endpoint, chat(endpoint, req, llmOptions(app)));
        const parsed = parseReply(def, reply.content);
        if (parsed.ok && parsed.dropped.length) {
          app.log.warn({ call: def.name, attempt, dropped: parsed.dropped.length, reasons: parsed.dropped }, 'LLM reply items dropped');
        }
        reason = parsed.ok ? (check?.(parsed.value) ?? '') : parsed.reason;
        if (parsed.ok && !reason) return parsed.value;
        app.log.warn({ call: def.name, attempt, reason }, 'LLM reply rejected');
      }
      throw new LlmOutputError(`The LLM's ${def.name} reply was invalid twice: ${reason}`);
    },
    async caption(image, mime) {
      const req: ChatRequest = {
        messages: [
          { role: 'system', content: CAPTION_SYSTEM },
          { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:${mime};base64,${image.toString('base64')}` } }] },
        ],
        maxTokens: 300,
      };
      return (await recorded(app, tenantId, source, 'caption', endpoint, chat(endpoint, req, llmOptions(app)))).content.trim();
    },
    async transcribe(data, filename, mime) {
      // Sending up to 10 MB of sound and waiting for its transcript takes far longer than a chat reply.
      const opts = { timeoutMs: app.config.llm.timeoutMs * 4, maxRetries: app.config.llm.maxRetries };
      const req = { data, filename, mime, model: app.config.llm.transcriptionModel };
      return (await recorded(app, tenantId, source, 'transcription', endpoint, transcribe(endpoint, req, opts))).text.trim();
    },
    complete(req) {
      return recorded(app, tenantId, source, 'chat_proxy', endpoint, complete(endpoint, req, { timeoutMs: app.config.llm.timeoutMs, maxRetries: 0 }));
    },
    upstream: {
      baseUrl: endpoint.baseUrl,
      // As the official client sends it: keyless local servers ignore whatever is sent.
      headers: { authorization: `Bearer ${endpoint.apiKey || 'none'}` },
      targets: endpoint.targets,
    },
    recordStreamed: (usage) => recordUsage(app, tenantId, source, 'chat_proxy', endpoint, usage),
  };
}

type Parsed<T> = { ok: true; value: T; dropped: string[] } | { ok: false; reason: string };

/**
 * Reads a reply as leniently as its meaning allows, because real models overreach in small ways
 * that would otherwise fail a whole extraction: JSON inside a ```json fence is taken, unknown
 * keys are dropped, a missing nullable field is null, and a malformed array item is dropped
 * (reported in `dropped`) as long as some item of that array is usable.
 */
function parseReply<T>(def: StructuredCall<T>, content: string): Parsed<T> {
  const json = readJson(content);
  if (json === undefined) return { ok: false, reason: 'the reply is not JSON' };
  const dropped: string[] = [];
  const result = (lenient(def.reply, dropped) as z.ZodType<T>).safeParse(json);
  if (result.success) return { ok: true, value: result.data, dropped };
  return { ok: false, reason: describe(result.error.issues) };
}

function readJson(content: string): unknown {
  for (const text of [content, /```(?:json)?\s*\n?([\s\S]*?)```/i.exec(content)?.[1]]) {
    if (text === undefined) continue;
    try {
      return JSON.parse(text);
    } catch {
      // Not this candidate; try the fenced block, if any.
    }
  }
  return undefined;
}

const describe = (issues: z.core.$ZodIssue[]) => `${issues[0]!.path.join('.') || 'reply'}: ${issues[0]!.message}`;

/** The accepting version of a strict reply schema; items dropped from arrays are noted in `dropped`. */
function lenient(schema: z.ZodType, dropped: string[]): z.ZodType {
  if (schema instanceof z.ZodObject) {
    const shape = Object.fromEntries(Object.entries(schema.shape as Record<string, z.ZodType>).map(([k, v]) => [k, lenient(v, dropped)]));
    return z.object(shape);
  }
  if (schema instanceof z.ZodNullable)
    return lenient(schema.unwrap() as z.ZodType, dropped)
      .nullable()
      .default(null);
  if (schema instanceof z.ZodArray) {
    const item = lenient(schema.element as z.ZodType, dropped);
    return z.array(z.unknown()).transform((items, ctx) => {
      const kept: unknown[] = [];
      let reason = '';
      for (const [i, raw] of items.entries()) {
        const r = item.safeParse(raw);
        if (r.success) kept.push(r.data);
        else dropped.push((reason = `item ${i}: ${describe(r.error.issues)}`));
      }
      // Something was asked for and nothing usable came back: the reply has no meaning left.
      if (items.length && !kept.length) {
        ctx.addIssue({ code: 'custom', message: `every item is malformed (${reason})` });
        return z.NEVER;
      }
      return kept;
    });
  }
  return schema;
}
