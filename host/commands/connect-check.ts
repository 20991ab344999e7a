/**
 * The end-to-end check of `orgmem connect`: an MCP initialize posted to the server's `/v1/mcp`
 * with the key, as the clients will send it. It answers what the server said, or throws why the
 * clients would fail and what to fix.
 */
export async function checkConnection(url: string, key: string): Promise<string> {
  const endpoint = `${url}/v1/mcp`;
  let res: Response;
  try {
    res = await fetch(endpoint, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'orgmem connect', version: '1' } },
      }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(
      `no orgmem server answers at ${url} (${cause?.code ?? cause?.message ?? (err as Error).message}); start one (orgmem serve) or give its address with --url`,
    );
  }
  const text = await res.text();
  let body: { detail?: string; result?: { serverInfo?: { name?: string; version?: string } } } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    // not JSON: not orgmem's answer, said below
  }
  if (res.status === 401 || res.status === 403)
    throw new Error(`the server at ${url} refused the key (${res.status}: ${body.detail ?? text.slice(0, 200)}); give a valid key with --key`);
  const info = body.result?.serverInfo;
  if (!res.ok || info?.name !== 'orgmem')
    throw new Error(`${endpoint} answered ${res.status} ${text.slice(0, 200)}, which is not orgmem's MCP endpoint; check --url`);
  return `${info.name} ${info.version ?? ''}`.trim();
}
