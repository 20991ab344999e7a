import type { EventSourceMessage } from 'eventsource-parser';
import type { AuthedCtx } from '../../core/context.ts';
import { UpstreamError } from '../../ports/llm/upstream.ts';

/** How one API's stream is relayed (chat completions, Messages, Responses). */
export interface RelayRules {
  /**
   * What to send the client for one upstream event (null: nothing), and whether the stream is
   * complete with it (`done`: its terminal event) or ended by it (`stop`: the upstream's own
   * error event, sent on as it came).
   */
  frame(event: EventSourceMessage): { out: string | null; done?: boolean; stop?: boolean };
  /** The error event telling the client that the stream failed, in the API's own shape. */
  failure(message: string): string;
  /** Runs once the stream is over, however it ended (the usage is recorded). */
  finish(): Promise<void>;
}

/**
 * The upstream's events relayed as they come, by the API's rules. A stream that breaks off (or
 * ends without its terminal event) ends with the API's error event, so the client's SDK raises
 * it; a client that left (the request aborted) gets nothing more. `finish` runs in every case,
 * its failure logged: the chat is over by then.
 */
export async function* relay(ctx: AuthedCtx, events: AsyncIterable<EventSourceMessage>, abort: AbortSignal, rules: RelayRules): AsyncGenerator<string> {
  try {
    let done = false;
    for await (const event of events) {
      const { out, done: complete, stop } = rules.frame(event);
      if (out !== null) yield out;
      if (stop) return;
      if ((done = !!complete)) break;
    }
    if (!done) throw new UpstreamError('the stream ended before its last event', null);
  } catch (err) {
    if (abort.aborted) return;
    yield rules.failure(`The upstream's stream failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await rules.finish().catch((err: unknown) => ctx.app.log.error({ err, requestId: ctx.requestId }, 'proxy usage not recorded'));
  }
}

/** An event's JSON data, or an UpstreamError (which the relay reports as the stream failing). */
export function eventJson<T>(event: EventSourceMessage): T {
  try {
    return JSON.parse(event.data) as T;
  } catch {
    throw new UpstreamError('an event of the stream is not JSON', null);
  }
}
