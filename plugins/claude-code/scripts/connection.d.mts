export interface Connection {
  url?: string;
  api_key?: string;
}
export function connectionPath(env?: NodeJS.ProcessEnv): string;
export function readConnection(path?: string): Connection;
export function writeConnection(connection: { url: string; api_key: string }, path?: string): void;
export function connectionSettings(env?: NodeJS.ProcessEnv): { url?: string; key?: string };
export function serverSettings(env?: NodeJS.ProcessEnv): { url: string; key: string } | string;
