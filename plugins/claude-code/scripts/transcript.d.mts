export interface Turn {
  /** Byte offset of the turn's first line in the transcript: with the session id, its name. */
  offset: number;
  /** Byte offset just past its last complete line. */
  end: number;
  user: string;
  assistant: string[];
  /** When the user wrote it, from the transcript, if it says. */
  at?: string;
}
export const MAX_CHUNK: number;
export function clean(text: string): string;
export function readTurns(bytes: Buffer, base: number): Turn[];
export function turnTexts(turn: Turn): string[];
