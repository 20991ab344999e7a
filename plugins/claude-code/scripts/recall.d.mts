export const RECALLED_PREAMBLE: string;
export const SESSION_START_MS: number;
export const PROMPT_MS: number;
export function recalledBlock(memories: unknown[]): string;
export function sessionStartContext(server: { url: string; key: string }, collection: string, session?: string): Promise<string>;
export function promptContext(server: { url: string; key: string }, collection: string, prompt: string, session?: string): Promise<string>;
