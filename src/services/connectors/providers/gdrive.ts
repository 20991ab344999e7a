import type { z } from 'zod';
import { MAX_FILE_BYTES } from '../../../schemas/files.ts';
import { gdriveProvider } from '../../../schemas/providers/gdrive.ts';
import { ProviderError } from '../http.ts';
import { defineConnector, type ConnectorRecord, type FetchContext } from './connector.ts';
import { mapLimit } from '../map-limit.ts';

/**
 * Google Drive files through the Drive v3 API, most recently modified first. Native Google
 * documents are exported as text; other files are downloaded and read into text by the files
 * pipeline (files/read-text.ts). `modifiedTime > cursor` keeps an incremental sync to what changed since the last.
 * The access token is renewed by the sync engine before a sync (refresh_token, expires_at): this
 * file only sends it.
 */

type Ctx = FetchContext<z.infer<typeof gdriveProvider.credentials>, z.infer<typeof gdriveProvider.config>>;

// Without `fields` Drive lists only id, name and mimeType; nextPageToken must be asked for too.
const FIELDS =
  'nextPageToken,files(id,name,mimeType,modifiedTime,webViewLink,size,lastModifyingUser(displayName,emailAddress),owners(displayName,emailAddress))';

// Each file costs a download or an export, so a page of 100 (Drive allows up to 1000) keeps pages short.
const PAGE_SIZE = 100;
// Downloads and exports of one page at a time: well under Drive's per-user request rate.
const PARALLEL = 4;

const GOOGLE_APPS = 'application/vnd.google-apps.';
// The native types that have a text export; folders, forms, shortcuts, drawings... have no text to keep.
const EXPORT_AS: Record<string, string> = {
  'application/vnd.google-apps.document': 'text/plain',
  'application/vnd.google-apps.spreadsheet': 'text/csv', // the first sheet only: Drive's CSV export
  'application/vnd.google-apps.presentation': 'text/plain',
};

interface DriveUser {
  displayName?: string;
  emailAddress?: string;
}

interface DriveFile {
  id: string;
  name: string;
  mimeType: string;
  modifiedTime: string;
  webViewLink?: string;
  size?: string;
  lastModifyingUser?: DriveUser;
  owners?: DriveUser[];
}

interface FileList {
  files?: DriveFile[];
  nextPageToken?: string;
}

/**
 * The file's body as text, or why it cannot be read. A file that cannot be read becomes a record
 * saying so rather than an error: throwing would fail every sync from then on (the cursor only
 * moves after a successful sync, so the same file would be met again) until someone removes it,
 * and the connection would end up paused; a record keeps the file findable by its name, shows the
 * reason, and is replaced by the real text as soon as the file is changed (its modifiedTime moves).
 */
async function body(ctx: Ctx, file: DriveFile, auth: Record<string, string>): Promise<{ text: string } | { unreadable: string }> {
  const id = encodeURIComponent(file.id);
  const exportAs = EXPORT_AS[file.mimeType];
  try {
    if (exportAs) {
      return {
        text: await ctx.http.text(`${ctx.apiUrl}/drive/v3/files/${id}/export?mimeType=${encodeURIComponent(exportAs)}`, {
          headers: { ...auth, accept: exportAs },
        }),
      };
    }
    // Checked before downloading: the files pipeline takes nothing larger, and a video would be read whole into memory.
    if (Number(file.size) > MAX_FILE_BYTES) return { unreadable: `it is larger than ${MAX_FILE_BYTES} bytes (10 MB)` };
    const { data } = await ctx.http.bytes(`${ctx.apiUrl}/drive/v3/files/${id}?alt=media&supportsAllDrives=true`, { headers: { ...auth, accept: '*/*' } });
    try {
      return { text: await ctx.readFile({ filename: file.name, contentType: file.mimeType, data }) };
    } catch (err) {
      return { unreadable: (err as Error).message };
    }
  } catch (err) {
    // Drive refuses some files for good (download disabled by the owner, too large to export): a
    // 403 that is not one of Drive's rate limits (also 403s, which must fail the sync and be retried).
    if (err instanceof ProviderError && err.status === 403 && !/rate ?limit/i.test(err.message)) return { unreadable: err.message };
    throw err;
  }
}

async function toRecord(ctx: Ctx, file: DriveFile, auth: Record<string, string>): Promise<ConnectorRecord | null> {
  if (file.mimeType.startsWith(GOOGLE_APPS) && !EXPORT_AS[file.mimeType]) return null;
  const read = await body(ctx, file, auth);
  // trim() also drops the byte-order mark Docs' text export starts with.
  const text = 'text' in read ? read.text.trim() : `This file could not be read: ${read.unreadable}`;
  const user = file.lastModifyingUser ?? file.owners?.[0];
  // Normalised by toISOString() so that cursors compare as strings in change order.
  const modified = new Date(file.modifiedTime).toISOString();
  return {
    id: file.id,
    text: text ? `${file.name}\n\n${text}` : file.name,
    url: file.webViewLink ?? null,
    author: user?.displayName || user?.emailAddress || null,
    updated_at: modified,
    cursor: modified,
    extra: { mime_type: file.mimeType, ...('unreadable' in read ? { unreadable: true } : {}) },
  };
}

export const gdrive = defineConnector(gdriveProvider, async function* (ctx) {
  const auth = { authorization: `Bearer ${ctx.credentials.token}` };
  const q = ['trashed = false'];
  if (ctx.config.folder_id) q.push(`'${ctx.config.folder_id}' in parents`);
  if (ctx.config.query) q.push(`(${ctx.config.query})`);
  if (ctx.cursor) q.push(`modifiedTime > '${ctx.cursor}'`);
  let pageToken: string | undefined;
  do {
    // Shared drives are left out of a listing unless both flags are given (a folder_id in one finds nothing otherwise).
    const params = new URLSearchParams({
      q: q.join(' and '),
      orderBy: 'modifiedTime desc',
      pageSize: String(PAGE_SIZE),
      fields: FIELDS,
      supportsAllDrives: 'true',
      includeItemsFromAllDrives: 'true',
    });
    if (pageToken) params.set('pageToken', pageToken);
    const list = await ctx.http.json<FileList>(`${ctx.apiUrl}/drive/v3/files?${params}`, { headers: auth });
    const records = (await mapLimit(list.files ?? [], PARALLEL, (file) => toRecord(ctx, file, auth))).filter((r): r is ConnectorRecord => r !== null);
    if (records.length) yield records;
    pageToken = list.nextPageToken;
  } while (pageToken);
});
