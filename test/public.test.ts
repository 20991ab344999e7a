import { describe, expect, it } from 'vitest';
import { call, shared } from './support/client.ts';

const { url } = shared();

describe('public endpoints', () => {
  it('health is healthy without a key', async () => {
    const res = await call(url, 'GET', '/v1/memory/health');
    expect(res).toMatchObject({ status: 200, body: { status: 'healthy' } });
  });

  it('status reports the current state without tenant data', async () => {
    const res = await call(url, 'GET', '/v1/status');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('operational');
    expect(res.body.database_latency_ms).toEqual(expect.any(Number));
    expect(Array.isArray(res.body.recent_checks)).toBe(true);
  });

  it.each([
    ['JSON', 'application/json', JSON.stringify({ path: '/pricing', referrer: 'https://example.com' })],
    ['text/plain JSON (sendBeacon)', 'text/plain', JSON.stringify({ path: '/docs' })],
    ['malformed JSON', 'application/json', '{"path":'],
    ['an unknown content type', 'application/octet-stream', 'xyz'],
    ['a wrong field type', 'application/json', JSON.stringify({ path: 42 })],
    ['no body', undefined, undefined],
  ])('pulse and track answer 204 for %s', async (_label, contentType, body) => {
    for (const path of ['/v1/pulse', '/v1/track']) {
      const res = await fetch(url + path, { method: 'POST', headers: contentType ? { 'content-type': contentType } : {}, body });
      expect(res.status, path).toBe(204);
      expect(await res.text()).toBe('');
    }
  });

  it('the dashboard forbids framing, sniffing and scripts from anywhere but itself; the API does not carry these headers', async () => {
    const page = await fetch(`${url}/collections/notes`);
    expect(page.status).toBe(200);
    const html = await page.text();
    // The build has no inline script or style for the policy to block.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=/);
    const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    for (const res of [page, await fetch(url + asset), await fetch(`${url}/favicon.svg`)]) {
      expect(res.headers.get('content-security-policy'), res.url).toContain("script-src 'self'");
      expect(res.headers.get('content-security-policy'), res.url).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-frame-options'), res.url).toBe('DENY');
      expect(res.headers.get('x-content-type-options'), res.url).toBe('nosniff');
    }
    expect((await fetch(`${url}/v1/memory/health`)).headers.get('content-security-policy')).toBeNull();
  });

  it('an unknown route is a 404 {detail}', async () => {
    const res = await call(url, 'GET', '/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body.detail).toMatch(/No route/);
  });
});
