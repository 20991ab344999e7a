import { bearer, startProviderFake, type FakeAnswer, type FakeRecord, type FakeRequest, type ProviderFake } from './base.ts';
import { googleError, UNAUTHENTICATED } from './google.ts';

/**
 * Google Drive v3 as the gdrive connector reads it: files.list with q, orderBy, pageSize,
 * pageToken and fields; files.export for native documents; files.get?alt=media for the rest.
 * A record is a file: title its name, body its content, author its last modifying user. Files are
 * Google Docs unless `mimeTypes` says otherwise, and in 'root' unless `parents` says otherwise.
 */

export const GDRIVE_TOKEN = 'ya29.fake-drive-access-token';

export interface GdriveFake extends ProviderFake {
  /** A file's mimeType by id (default: a Google Doc). application/octet-stream serves bytes no reader reads. */
  mimeTypes: Map<string, string>;
  /** A file's parent folder by id (default 'root'). */
  parents: Map<string, string>;
  /** Files whose owner disabled downloading: alt=media answers 403 cannotDownloadFile. */
  restricted: Set<string>;
}

const DOC = 'application/vnd.google-apps.document';
const EXPORTS: Record<string, string[]> = {
  [DOC]: ['text/plain'],
  'application/vnd.google-apps.spreadsheet': ['text/csv'],
  'application/vnd.google-apps.presentation': ['text/plain'],
};
const LINKS: Record<string, string> = {
  [DOC]: 'https://docs.google.com/document/d/{id}/edit?usp=drivesdk',
  'application/vnd.google-apps.spreadsheet': 'https://docs.google.com/spreadsheets/d/{id}/edit?usp=drivesdk',
  'application/vnd.google-apps.presentation': 'https://docs.google.com/presentation/d/{id}/edit?usp=drivesdk',
  'application/vnd.google-apps.folder': 'https://drive.google.com/drive/folders/{id}',
};
// What files.list returns when the request names no fields.
const DEFAULT_FIELDS = 'kind,nextPageToken,incompleteSearch,files(kind,id,name,mimeType)';

const INVALID_QUERY = googleError(400, 'Invalid Value', 'invalid', 'INVALID_ARGUMENT', { location: 'q', locationType: 'parameter' });

/** The top-level names of a `fields` selection, each with its sub-selection: "a,b(c,d(e))" -> a: null, b: "c,d(e)". */
function parseFields(spec: string): Map<string, string | null> {
  const out = new Map<string, string | null>();
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= spec.length; i++) {
    const c = spec[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if ((c === ',' || c === undefined) && depth === 0) {
      const token = spec.slice(start, i).trim();
      start = i + 1;
      const open = token.indexOf('(');
      if (token) out.set(open < 0 ? token : token.slice(0, open).trim(), open < 0 ? null : token.slice(open + 1, -1));
    }
  }
  return out;
}

/** Only the fields asked for, as Drive answers. */
function select(value: unknown, spec: string | null): unknown {
  if (spec === null || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => select(v, spec));
  const fields = parseFields(spec);
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => fields.has(k))
      .map(([k, v]) => [k, select(v, fields.get(k)!)]),
  );
}

const email = (name: string) => `${name.toLowerCase().replace(/[^a-z]+/g, '.')}@example.com`;

export async function startGdriveFake(opts: { pageSize?: number } = {}): Promise<GdriveFake> {
  const mimeTypes = new Map<string, string>();
  const parents = new Map<string, string>();
  const restricted = new Set<string>();
  const mime = (r: FakeRecord) => mimeTypes.get(r.id) ?? DOC;
  // A file nothing reads: control bytes, as in a binary record format.
  const content = (r: FakeRecord) =>
    mime(r) === 'application/octet-stream' ? Buffer.from(Array.from({ length: 64 }, (_, i) => i % 32)) : Buffer.from(r.body, 'utf8');

  function file(r: FakeRecord) {
    const user = { kind: 'drive#user', displayName: r.author, emailAddress: email(r.author), me: false, permissionId: `perm-${email(r.author)}` };
    const type = mime(r);
    return {
      kind: 'drive#file',
      id: r.id,
      name: r.title,
      mimeType: type,
      parents: [parents.get(r.id) ?? 'root'],
      modifiedTime: new Date(r.updated).toISOString(),
      webViewLink: (LINKS[type] ?? 'https://drive.google.com/file/d/{id}/view?usp=drivesdk').replace('{id}', r.id),
      ...(type.startsWith('application/vnd.google-apps.') ? {} : { size: String(content(r).length) }),
      lastModifyingUser: user,
      owners: [user],
    };
  }

  /** The q the connector sends: clauses joined by "and", each one Drive's syntax; anything else is Drive's 400. */
  function matcher(q: string): ((f: ReturnType<typeof file>) => boolean) | null {
    const tests: Array<(f: ReturnType<typeof file>) => boolean> = [];
    for (const raw of q.split(/\s+and\s+/i)) {
      const clause = raw.trim().replace(/^\(+/, '').replace(/\)+$/, '').trim();
      let m: RegExpExecArray | null;
      if (/^trashed\s*=\s*false$/.test(clause)) continue;
      else if ((m = /^'([^']+)' in parents$/.exec(clause))) tests.push((f) => f.parents.includes(m![1]!));
      else if ((m = /^modifiedTime\s*>\s*'([^']+)'$/.exec(clause))) {
        const after = Date.parse(m[1]!);
        if (Number.isNaN(after)) return null;
        tests.push((f) => Date.parse(f.modifiedTime) > after);
      } else if ((m = /^name contains '([^']+)'$/.exec(clause))) tests.push((f) => f.name.includes(m![1]!));
      else if ((m = /^mimeType\s*=\s*'([^']+)'$/.exec(clause))) tests.push((f) => f.mimeType === m![1]);
      else return null;
    }
    return (f) => tests.every((t) => t(f));
  }

  function route(req: FakeRequest, fake: ProviderFake): FakeAnswer {
    if (bearer(req) !== GDRIVE_TOKEN) return UNAUTHENTICATED;
    const p = req.url.searchParams;
    if (req.url.pathname === '/drive/v3/files') {
      const matches = matcher(p.get('q') ?? 'trashed = false');
      if (!matches) return INVALID_QUERY;
      const files = fake.records.map(file).filter(matches);
      if (p.get('orderBy') === 'modifiedTime desc') files.sort((a, b) => b.modifiedTime.localeCompare(a.modifiedTime));
      const size = Math.min(Number(p.get('pageSize') ?? 100) || 100, opts.pageSize ?? 2);
      const offset = p.get('pageToken') ? Number(Buffer.from(p.get('pageToken')!, 'base64url').toString()) : 0;
      const page = files.slice(offset, offset + size);
      const more = offset + size < files.length;
      const answer = {
        kind: 'drive#fileList',
        incompleteSearch: false,
        files: page,
        ...(more ? { nextPageToken: Buffer.from(String(offset + size)).toString('base64url') } : {}),
      };
      return { json: select(answer, p.get('fields') ?? DEFAULT_FIELDS) };
    }
    const m = /^\/drive\/v3\/files\/([^/]+)(\/export)?$/.exec(req.url.pathname);
    const record = m && fake.records.find((r) => r.id === decodeURIComponent(m[1]!));
    if (!m) return { status: 404, body: 'Not Found' };
    if (!record)
      return googleError(404, `File not found: ${decodeURIComponent(m[1]!)}.`, 'notFound', 'NOT_FOUND', { location: 'fileId', locationType: 'parameter' });
    const type = mime(record);
    if (m[2]) {
      const exports = EXPORTS[type];
      if (!exports) return googleError(403, 'Export only supports Docs Editors files.', 'fileNotExportable', 'PERMISSION_DENIED');
      const as = p.get('mimeType') ?? '';
      if (!exports.includes(as)) return googleError(400, 'The requested conversion is not supported.', 'badRequest', 'INVALID_ARGUMENT');
      // Docs' text export starts with a byte-order mark.
      return { body: (as === 'text/plain' ? '\uFEFF' : '') + record.body, headers: { 'content-type': `${as}; charset=utf-8` } };
    }
    if (p.get('alt') !== 'media') return { json: select(file(record), p.get('fields') ?? 'kind,id,name,mimeType') };
    if (type.startsWith('application/vnd.google-apps.')) {
      return googleError(
        403,
        'Only files with binary content can be downloaded. Use Export with Docs Editors files.',
        'fileNotDownloadable',
        'PERMISSION_DENIED',
        { location: 'alt', locationType: 'parameter' },
      );
    }
    if (restricted.has(record.id)) return googleError(403, 'This file cannot be downloaded by the user.', 'cannotDownloadFile', 'PERMISSION_DENIED');
    return { body: content(record), headers: { 'content-type': type } };
  }

  const fake = await startProviderFake({
    route,
    connection: () => ({
      credentials: { token: GDRIVE_TOKEN, refresh_token: '1//fake-refresh-token', expires_at: new Date(Date.now() + 3_600_000).toISOString() },
      config: {},
    }),
    // Drive ids: 33 characters of letters, digits, - and _.
    newId: (n) => `1FakeDriveFile${String(n).padStart(19, '0')}`,
  });
  return Object.assign(fake, { mimeTypes, parents, restricted });
}
