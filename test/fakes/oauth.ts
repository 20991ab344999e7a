import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TokenRequest {
  path: string;
  authorization: string | undefined;
  contentType: string | undefined;
  /** The form or JSON body, as an object. */
  params: Record<string, string>;
}

export const GOOGLE_REFRESH_TOKEN = '1//fake-google-refresh';

/**
 * The token endpoints of the OAuth providers on 127.0.0.1, each with its documented request and
 * answer: Slack's `oauth.v2.access` (a form; `{ok, access_token}`), Notion's `/v1/oauth/token`
 * (JSON with Basic client auth) and Google's `/token` (a form; authorization_code and
 * refresh_token grants). The code `good-code` is accepted; a code `answer:<json>` is answered with
 * that JSON, whatever it is (a broken provider); any other is refused as each refuses it.
 */
export async function startOAuthFake(opts: { googleAccessToken: string; googleRenewedToken: string; clientSecret: string }) {
  const requests: TokenRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const json = req.headers['content-type']?.startsWith('application/json');
      const params = json ? (JSON.parse(raw || '{}') as Record<string, string>) : Object.fromEntries(new URLSearchParams(raw));
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      requests.push({ path, authorization: req.headers.authorization, contentType: req.headers['content-type'], params });
      const send = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      const good = params.code === 'good-code';
      if (params.code?.startsWith('answer:')) return res.writeHead(200, { 'content-type': 'application/json' }).end(params.code.slice('answer:'.length));
      if (path === '/oauth.v2.access') {
        if (params.client_secret !== opts.clientSecret) return send(200, { ok: false, error: 'invalid_client_id' });
        return send(
          200,
          good ? { ok: true, access_token: 'xoxb-from-oauth', token_type: 'bot', team: { id: 'T1', name: 'Acme' } } : { ok: false, error: 'invalid_code' },
        );
      }
      if (path === '/v1/oauth/token') {
        if (!good) return send(400, { error: 'invalid_grant', error_description: 'Invalid code.' });
        return send(200, { access_token: 'secret_from-oauth', token_type: 'bearer', bot_id: 'b1', workspace_id: 'w1', workspace_name: 'Acme' });
      }
      if (path === '/token') {
        if (params.grant_type === 'refresh_token') {
          if (params.refresh_token !== GOOGLE_REFRESH_TOKEN)
            return send(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
          return send(200, { access_token: opts.googleRenewedToken, expires_in: 3599, token_type: 'Bearer' });
        }
        if (!good) return send(400, { error: 'invalid_grant', error_description: 'Malformed auth code.' });
        // An access token about to expire, so the first sync has to renew it.
        return send(200, { access_token: opts.googleAccessToken, expires_in: 60, refresh_token: GOOGLE_REFRESH_TOKEN, token_type: 'Bearer' });
      }
      send(404, { error: 'not_found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
