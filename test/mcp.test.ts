import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { call, newTenant, shared } from './support/client.ts';
import { exercise, type ToolResult } from './support/mcp.ts';

describe('MCP over Streamable HTTP at /v1/mcp', () => {
  const { url, adminKey } = shared();

  it('lists tools, stores then gets a memory with the SDK client', async () => {
    const t = await newTenant(url, adminKey);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${t.key}` } } }));
    const id = await exercise(client);
    await client.close();
    // Stored through MCP means stored for REST too, attributed to the key.
    const rest = await t.api('GET', `/v1/memory/collections/mcp/memories/${id}`);
    expect(rest.body.created_by.label).toBe('default');
  });

  it('refuses a missing or bad key with 401 before speaking MCP', async () => {
    const res = await call(url, 'POST', '/v1/mcp', {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expect(res.status).toBe(401);
    // Where to get a token instead (RFC 9728): docs/mcp.md, "Remote MCP with OAuth".
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${url}/.well-known/oauth-protected-resource/v1/mcp", scope="memory:read memory:write"`,
    );
  });

  it('answers a body that is no JSON-RPC with a JSON-RPC error carrying the detail and the status', async () => {
    const t = await newTenant(url, adminKey);
    const accept = { accept: 'application/json, text/event-stream' };
    const cases: Array<[{ body?: unknown; rawBody?: string; headers?: Record<string, string> }, number, string]> = [
      [{ rawBody: '{"jsonrpc":' }, -32700, 'Malformed JSON body'],
      [{ rawBody: 'tools/list', headers: { 'content-type': 'text/plain' } }, -32700, 'Unsupported content type text/plain: send application/json'],
      [{ body: { hello: 'world' } }, -32600, 'The body is not a JSON-RPC message or a batch of them'],
      [{ body: [] }, -32600, 'The body is not a JSON-RPC message or a batch of them'],
    ];
    for (const [request, code, detail] of cases) {
      const res = await call(url, 'POST', '/v1/mcp', { key: t.key, ...request, headers: { ...accept, ...request.headers } });
      expect(res.status, detail).toBe(400);
      expect(res.body).toEqual({ jsonrpc: '2.0', id: null, error: { code, message: detail, data: { status: 400, detail } } });
    }
  });

  it('serves the current protocol revision and the 2025 ones, each negotiated as asked (docs/mcp.md)', async () => {
    const t = await newTenant(url, adminKey);
    const initialize = (protocolVersion: string) =>
      call(url, 'POST', '/v1/mcp', {
        key: t.key,
        headers: { accept: 'application/json, text/event-stream' },
        body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'test', version: '1' } } },
      });
    for (const version of ['2025-11-25', '2025-06-18', '2025-03-26']) {
      const res = await initialize(version);
      expect(res.body.result.protocolVersion, version).toBe(version);
    }
    expect((await initialize('1999-01-01')).body.result.protocolVersion).toBe('2025-11-25');
  });

  it("answers the transport's own refusals with the detail and the status too", async () => {
    const t = await newTenant(url, adminKey);
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const both = 'application/json, text/event-stream';
    const cases: Array<[Record<string, string>, unknown, number, RegExp]> = [
      [{ accept: 'application/json' }, list, 406, /^Not Acceptable: Client must accept both application\/json and text\/event-stream$/],
      [{ accept: both, 'mcp-protocol-version': '1999-01-01' }, list, 400, /^Bad Request: Unsupported protocol version: 1999-01-01 \(supported versions: .+\)$/],
      [{ accept: both }, Array.from({ length: 101 }, (_, i) => ({ ...list, id: i })), 400, /^Invalid Request: Batch must not exceed 100 messages$/],
    ];
    for (const [headers, body, status, detail] of cases) {
      const res = await call(url, 'POST', '/v1/mcp', { key: t.key, body, headers });
      expect(res.status, String(detail)).toBe(status);
      expect(res.body.error.message).toMatch(detail);
      expect(res.body.error.data).toEqual({ status, detail: res.body.error.message });
    }
  });

  it('GET and DELETE are 405: the endpoint is stateless and keeps no stream open', async () => {
    const t = await newTenant(url, adminKey);
    for (const method of ['GET', 'DELETE']) {
      const res = await call(url, method, '/v1/mcp', { key: t.key });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('a read-only key cannot store', async () => {
    const t = await newTenant(url, adminKey);
    const reader = await t.newKey('reader', true);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${reader.key}` } } }));
    const res = (await client.callTool({ name: 'store_memory', arguments: { collection: 'mcp', text: 'x' } })) as ToolResult;
    expect(res.isError).toBe(true);
    expect(res.content[0]!.text).toMatch(/^403/);
    await client.close();
  });
});
