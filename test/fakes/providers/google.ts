import type { FakeAnswer } from './base.ts';

/** Google's error body, shared by the Drive and Gmail fakes: { error: { code, message, errors, status } }. */
export function googleError(code: number, message: string, reason: string, status: string, extra: Record<string, string> = {}): FakeAnswer {
  return { status: code, json: { error: { code, message, errors: [{ message, domain: 'global', reason, ...extra }], status } } };
}

/** What Google answers a missing, expired or wrong access token. */
export const UNAUTHENTICATED: FakeAnswer = {
  ...googleError(
    401,
    'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
    'authError',
    'UNAUTHENTICATED',
    { location: 'Authorization', locationType: 'header' },
  ),
  headers: { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' },
};
