/**
 * A procedure result that is a stream of server-sent events rather than one JSON value (a chat
 * proxy answering `stream: true`): the REST adapter sends `body` as `text/event-stream` as it is
 * produced, with `headers`, and calls `abort` when the client goes away before the end, so that
 * nothing keeps running for a reader that left. Like a Download, `invoke` passes it through
 * without the output check; only REST sends one (Procedure.streams: other front ends are refused
 * such input before the handler runs).
 */
export class EventStream {
  constructor(
    readonly headers: Record<string, string>,
    readonly body: AsyncIterable<string>,
    readonly abort: () => void,
  ) {}
}

/** One event as written on the wire: an optional `event:` line, then its data, then a blank line. */
export const sseFrame = (data: string, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`;
