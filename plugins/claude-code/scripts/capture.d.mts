export interface CapturePayload {
  session_id: string;
  transcript_path: string;
  hook_event_name: string;
  cwd?: string;
}
export function stateDir(): string;
export function captureInBackground(args: string[], payload: CapturePayload): Promise<void>;
export function capture(server: { url: string; key: string }, collection: string, payload: CapturePayload, dir?: string): Promise<number>;
export function logFailure(message: string, dir?: string): void;
