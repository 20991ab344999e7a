import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';

/**
 * A small OpenID Connect provider on 127.0.0.1 whose ID tokens a test writes: discovery, JWKS,
 * an authorization endpoint that sends the browser straight back with a code, and a token
 * endpoint that checks the code (once) and its PKCE verifier, then answers an ID token signed
 * with jose. For the claims a real provider never gets wrong (issuer, audience, expiry, nonce,
 * signature), which the relying party must refuse all the same.
 */

export interface Forger {
  issuer: string;
  clientId: string;
  /** Whose ID token the next code is exchanged for, and how it is altered; reset by each call. */
  next(claims: Record<string, unknown>, opts?: { alter?: (claims: JWTPayload) => JWTPayload; foreignKey?: boolean; idToken?: string }): void;
  /** The last ID token answered, as sent. */
  lastIdToken(): string | undefined;
  close(): Promise<void>;
}

export async function startForger(): Promise<Forger> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const foreign = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', use: 'sig', alg: 'RS256' };
  const clientId = 'forged-client';
  const codes = new Map<string, { nonce: string; challenge: string; used: boolean }>();
  let plan: Parameters<Forger['next']> = [{}];
  let last: string | undefined;
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

  server.on('request', async (req, res) => {
    const url = new URL(req.url!, issuer);
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_post', 'none'],
      });
    }
    if (url.pathname === '/jwks') return json(res, 200, { keys: [jwk] });
    if (url.pathname === '/authorize') {
      const code = randomBytes(16).toString('base64url');
      codes.set(code, { nonce: url.searchParams.get('nonce')!, challenge: url.searchParams.get('code_challenge')!, used: false });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state')!);
      return res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      const grant = codes.get(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      if (!grant || grant.used || createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) {
        if (grant) grant.used = true;
        return json(res, 400, { error: 'invalid_grant', error_description: 'the code is unknown, used or not for this verifier' });
      }
      grant.used = true;
      const [claims, opts = {}] = plan;
      plan = [{}];
      const now = Math.floor(Date.now() / 1000);
      const base: JWTPayload = { iss: issuer, aud: clientId, iat: now, exp: now + 300, nonce: grant.nonce, email_verified: true, ...claims };
      const payload = opts.alter ? opts.alter(base) : base;
      const idToken =
        opts.idToken ?? (await new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).sign(opts.foreignKey ? foreign.privateKey : privateKey));
      last = idToken;
      return json(res, 200, { access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: idToken });
    }
    res.writeHead(404).end();
  });

  return {
    issuer,
    clientId,
    next: (...args) => void (plan = args),
    lastIdToken: () => last,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
