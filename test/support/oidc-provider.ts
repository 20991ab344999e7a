import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** A person as the provider knows them: their ID token's claims. */
export interface ProviderAccount {
  sub: string;
  email: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in next: the provider's login step takes this person without a form. */
  signInAs(account: ProviderAccount): void;
  close(): Promise<void>;
}

/**
 * A real OpenID Connect provider (oidc-provider) on 127.0.0.1 with one confidential client whose
 * redirect URI is `callback`. Its login and consent step is a page that signs in whoever
 * `signInAs` named and grants what was asked: the browser goes through every redirect of the
 * real flow, with the provider's cookies, codes, PKCE and signed ID tokens.
 */
export async function startProvider(callback: string): Promise<TestProvider> {
  let current: ProviderAccount | null = null;
  const accounts = new Map<string, ProviderAccount>();
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'orgmem-test';
  const clientSecret = 'a-client-secret-of-thirty-two-chars!';
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [callback],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups'] },
    conformIdTokenClaims: false,
    findAccount: (_ctx, sub) => {
      const account = accounts.get(sub);
      return account ? { accountId: sub, claims: () => ({ ...account }) } : undefined;
    },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
    cookies: { keys: ['test-cookie-key'] },
    ttl: { Session: 3600, Grant: 3600, Interaction: 600, AccessToken: 600, AuthorizationCode: 60, IdToken: 600 },
  });
  const handle = provider.callback();
  server.on('request', async (req, res) => {
    if (!req.url?.startsWith('/interaction/')) return handle(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      if (!current) throw new Error('signInAs was not called');
      accounts.set(current.sub, current);
      const grant = new provider.Grant({ accountId: current.sub, clientId: details.params.client_id as string });
      grant.addOIDCScope(details.params.scope as string);
      const grantId = await grant.save();
      await provider.interactionFinished(req, res, { login: { accountId: current.sub }, consent: { grantId } }, { mergeWithLastSubmission: false });
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  return {
    issuer,
    clientId,
    clientSecret,
    signInAs: (account) => void (current = { email_verified: true, ...account }),
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
