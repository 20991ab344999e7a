import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { procedures } from '../procedures/index.ts';
import { call, shared } from './support/client.ts';

const { url } = shared();

describe('/openapi.json', () => {
  it('is public, valid OpenAPI 3.1 and matches the committed snapshot', async () => {
    const res = await call(url, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('0.1.0');
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes['x-api-key']).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    // A changed contract shows up as a diff to review; update with `npx vitest run -u`.
    await expect(JSON.stringify(doc, null, 2)).toMatchFileSnapshot('__snapshots__/openapi.json');
  });

  it('documents every procedure with its method, status, security and errors', async () => {
    const doc = (await call(url, 'GET', '/openapi.json')).body;
    for (const proc of procedures) {
      const op = doc.paths[proc.rest.path]?.[proc.rest.method.toLowerCase()];
      expect(op, `${proc.rest.method} ${proc.rest.path}`).toBeDefined();
      expect(op.operationId).toBe(proc.name);
      expect(Object.keys(op.responses)).toContain(String(proc.rest.status));
      if (proc.access === 'public') expect(op.security).toEqual([]);
      else if (proc.access === 'internal') {
        // A shared secret in a header, not an API key.
        expect(op.security).toEqual([]);
        expect(op.parameters).toContainEqual(expect.objectContaining({ in: 'header', name: proc.secret!.header.toLowerCase(), required: true }));
        expect(op.responses['401']).toBeDefined();
      } else {
        // The Messages proxy (and its count_tokens) also takes the key as Anthropic's clients send it.
        const anthropic = proc.name === 'proxy.messages' || proc.name === 'proxy.countTokens';
        expect(op.security).toEqual(anthropic ? [{ bearer: [] }, { 'x-api-key': [] }] : [{ bearer: [] }]);
        expect(op.responses['401']).toBeDefined();
      }
    }
  });
});
