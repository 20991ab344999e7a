import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Tenant } from './client.ts';

export const col = (name: string) => `/v1/memory/collections/${name}`;

/** Polls an extraction job until it completes, recording every state it was seen in. */
export async function pollJob(t: Tenant, jobId: string, timeoutMs = 45_000): Promise<{ states: string[]; job: any }> {
  const states: string[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.api('GET', `/v1/memory/extract/job/${jobId}`);
    if (res.status !== 200) throw new Error(`job read failed: ${res.status} ${JSON.stringify(res.body)}`);
    if (states.at(-1) !== res.body.state) states.push(res.body.state);
    if (res.body.complete) return { states, job: res.body };
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${res.body.state} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function rememberSync(t: Tenant, collection: string, content: string, importance?: number) {
  return t.api('POST', `${col(collection)}/remember?sync=true`, { content, ...(importance !== undefined && { importance }) });
}

/** The official MCP client over Streamable HTTP with the tenant's key. */
export async function mcpClient(url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'orgmem-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}
