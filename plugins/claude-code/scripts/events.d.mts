export type Harness = 'claude-code' | 'codex';
export type HookEvent = 'SessionStart' | 'UserPromptSubmit' | 'Stop' | 'PreCompact' | 'SessionEnd';
export interface HookGroup {
  matcher?: string;
  hooks: { type: string; command?: string; timeout?: number }[];
}
export const HOOK_EVENTS: readonly { event: HookEvent; timeout: number; harnesses: readonly Harness[] }[];
export const PLUGIN_SCRIPT: string;
export function hookCommand(script: string, event: HookEvent): string;
export function hooksConfig(harness: Harness, script: string): { hooks: Record<string, HookGroup[]> };
