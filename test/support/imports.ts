import { expect } from 'vitest';
import { call, type Res } from './client.ts';
import { until } from './until.ts';

export const IMPORT = '/v1/memory/admin/import';

/**
 * Sends an import and waits for its job (the server's worker): the 202 answer, then the import's
 * status once it is done or failed. A refusal (422, 403...) is answered as it came.
 */
export async function importAndWait(url: string, key: string, opts: { body?: unknown; rawBody?: string; headers?: Record<string, string> }): Promise<Res> {
  const sent = await call(url, 'POST', IMPORT, { key, ...opts });
  if (sent.status !== 202) return sent;
  expect(sent.body).toMatchObject({ state: expect.stringMatching(/^(queued|running|done|failed)$/) });
  return until(
    `import ${sent.body.import_id} done or failed`,
    async () => {
      const status = await call(url, 'GET', `${IMPORT}/${sent.body.import_id}`, { key });
      return status.body.state === 'done' || status.body.state === 'failed' ? status : undefined;
    },
    60_000,
  );
}
