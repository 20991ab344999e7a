import type { HookEvent } from './events.mjs';
export function runHook(event: HookEvent, captureArgs: string[]): Promise<void>;
export function runCapture(): Promise<void>;
