import type { AuthedCtx } from '../../core/context.ts';
import type { Quarantine, TrustClass, TrustPolicy } from '../../schemas/trust.ts';
import { detectSteering, type Steering } from './steering.ts';

/** What a write stores about a memory's trust: its class, whether it is held, and its quarantine record. */
export interface Screened {
  trust: TrustClass;
  held: boolean;
  quarantine: Quarantine | null;
  /** The detector's weak signal only: the tenant's LLM, when it has one, gives a second opinion. */
  suspect?: boolean;
}

/**
 * The trust class of what a caller writes itself (docs/trust.md, "Trust classes"): what a hook or
 * a chat proxy captures from a conversation is `tool`, whoever's key it runs with; a person's key
 * writes `user`; any other key or OAuth client `agent`. The pipelines that read outside text
 * (files, mail, connectors, imports) name their own class instead.
 */
export function callerTrust(ctx: Pick<AuthedCtx, 'agent' | 'call'>): TrustClass {
  if (ctx.call?.via === 'hook' || ctx.call?.via === 'proxy') return 'tool';
  return ctx.agent.person ? 'user' : 'agent';
}

/**
 * Screens one text of a trust class under the tenant's policy (docs/trust.md, "Quarantine"): text
 * that tries to instruct an agent is held (`quarantine`) or marked (`flag`); `off` stores it as
 * it is. `inherited`: the reasons a memory it was made from is held for (remember's facts of a
 * held text are held with it, whatever their own words). `detected`: the detector's verdict on
 * this text when the caller found it already, off the event loop (a file's chunks,
 * files/parse-runner.ts).
 */
export function screenText(text: string, trust: TrustClass, policy: TrustPolicy, inherited?: string[], detected?: Steering): Screened {
  const action = policy[trust];
  const found = inherited?.length ? { verdict: 'steering' as const, reasons: inherited } : action === 'off' ? null : (detected ?? detectSteering(text));
  const reasons = found?.verdict === 'steering' ? found.reasons : [];
  if (!reasons.length) return { trust, held: false, quarantine: null, suspect: found?.verdict === 'suspect' };
  const held = !!inherited?.length || action === 'quarantine';
  return { trust, held, quarantine: { state: held ? 'held' : 'flagged', reasons, at: new Date().toISOString(), decided_by: null, decided_at: null } };
}
