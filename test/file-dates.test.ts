import { createCanvas, loadImage } from '@napi-rs/canvas';
import { PDFDocument } from 'pdf-lib';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { newTenant, shared, type Tenant } from './support/client.ts';
import { docx, pdf, png, pptx } from './support/documents.ts';
import { exifTiff, inJpeg, inPng } from './support/exif.ts';
import { postForm } from './support/transports.ts';

/**
 * observed_at from a file's own metadata (docs/time.md, "Three times"): a PDF's CreationDate, an
 * office file's created property, a mail file's Date, read in the bounded runner, and a photo's
 * EXIF DateTimeOriginal; a moment out of bounds is not believed, and a client's observed_at wins.
 */
let t: Tenant;
beforeAll(async () => {
  const { url, adminKey } = shared();
  t = await newTenant(url, adminKey);
});

const b64 = (b: Buffer) => b.toString('base64');
const datedPdf = async (lines: string[], created: Date, modified = created) => {
  const doc = await PDFDocument.load(await pdf(lines));
  doc.setCreationDate(created);
  doc.setModificationDate(modified);
  return Buffer.from(await doc.save());
};
/** The docx and pptx writers stamp their created property with the clock: it is set for the build. */
async function builtAt<T>(at: string, build: () => Promise<T>): Promise<T> {
  vi.useFakeTimers({ toFake: ['Date'], now: new Date(at) });
  try {
    return await build();
  } finally {
    vi.useRealTimers();
  }
}
async function drop(collection: string, files: Array<{ filename: string; content_type: string; data: Buffer }>) {
  const res = await postForm(shared().url, t.key, `/v1/memory/collections/${collection}/drop`, {
    files: files.map((f) => ({ ...f, data: b64(f.data) })),
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.files as Array<{ filename: string; status: string; memory_ids: string[] }>;
}
const memory = async (collection: string, id: string) => (await t.api('GET', `/v1/memory/collections/${collection}/memories/${id}`)).body;

describe('observed_at from file metadata', () => {
  it('takes a PDF’s CreationDate, a docx’s and a pptx’s created property, and a mail file’s Date, on every chunk', async () => {
    const mail = Buffer.from(
      'From: ana@example.com\r\nTo: bo@example.com\r\nSubject: Harbour\r\nDate: Tue, 14 Mar 2023 08:30:00 +0100\r\n\r\nThe harbour opens at six.\r\n',
    );
    const files = await drop('dated', [
      { filename: 'report.pdf', content_type: 'application/pdf', data: await datedPdf(['The report of the harbour year.'], new Date('2021-04-05T06:07:08Z')) },
      {
        filename: 'notes.docx',
        content_type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        data: await builtAt('2020-02-03T04:05:06Z', () => docx(['Notes on the harbour crane.'])),
      },
      {
        filename: 'deck.pptx',
        content_type: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
        data: await builtAt('2019-09-10T11:12:13Z', () => pptx([['The harbour plan.']])),
      },
      { filename: 'harbour.eml', content_type: 'message/rfc822', data: mail },
      { filename: 'plain.txt', content_type: 'text/plain', data: Buffer.from('A text file says nothing of when it was written.') },
    ]);
    expect(files.map((f) => f.status)).toEqual(['stored', 'stored', 'stored', 'stored', 'stored']);
    const observed = await Promise.all(files.map(async (f) => (await memory('dated', f.memory_ids[0]!)).observed_at as string));
    expect(observed.slice(0, 4)).toEqual(['2021-04-05T06:07:08.000Z', '2020-02-03T04:05:06.000Z', '2019-09-10T11:12:13.000Z', '2023-03-14T07:30:00.000Z']);
    // Without a date in the file it is the moment it was stored.
    const plain = await memory('dated', files[4]!.memory_ids[0]!);
    expect(plain.observed_at).toBe(plain.created_at);
    expect((await memory('dated', files[0]!.memory_ids[0]!)).valid_from).toBe('2021-04-05T06:07:08.000Z');
  });

  it('does not believe a date out of bounds: the year 2099, or 1900', async () => {
    const files = await drop('bounds', [
      { filename: 'future.pdf', content_type: 'application/pdf', data: await datedPdf(['From the future.'], new Date('2099-01-01T00:00:00Z')) },
      { filename: 'old.pdf', content_type: 'application/pdf', data: await datedPdf(['From long ago.'], new Date('1900-01-01T00:00:00Z')) },
      {
        filename: 'mod.pdf',
        content_type: 'application/pdf',
        // A CreationDate out of bounds falls back on the ModDate.
        data: await datedPdf(['Modified later.'], new Date('2099-01-01T00:00:00Z'), new Date('2022-06-07T08:09:10Z')),
      },
    ]);
    const [future, old, mod] = await Promise.all(files.map((f) => memory('bounds', f.memory_ids[0]!)));
    expect(future.observed_at).toBe(future.created_at);
    expect(old.observed_at).toBe(old.created_at);
    expect(mod.observed_at).toBe('2022-06-07T08:09:10.000Z');
  });

  it('takes a photo’s EXIF DateTimeOriginal, with its offset, from a JPEG and a PNG', async () => {
    const drawn = await loadImage(png('The harbour crane at dawn'));
    const canvas = createCanvas(drawn.width, drawn.height);
    canvas.getContext('2d').drawImage(drawn, 0, 0);
    const taken = exifTiff({ DateTimeOriginal: '2022:08:09 18:45:00', OffsetTimeOriginal: '+02:00' });
    const files = await drop('photos', [
      { filename: 'crane.jpg', content_type: 'image/jpeg', data: inJpeg(canvas.toBuffer('image/jpeg'), taken) },
      { filename: 'crane.png', content_type: 'image/png', data: inPng(png('The harbour crane at dusk'), exifTiff({ CreateDate: '2022:08:10 21:00:00' })) },
    ]);
    expect(files.map((f) => f.status)).toEqual(['stored', 'stored']);
    const [jpeg, dusk] = await Promise.all(files.map((f) => memory('photos', f.memory_ids[0]!)));
    expect(jpeg.text).toContain('harbour crane');
    expect(jpeg.observed_at).toBe('2022-08-09T16:45:00.000Z');
    expect(dusk.observed_at).toBe('2022-08-10T21:00:00.000Z');
  });

  it('upload takes the file’s date, and the client’s observed_at wins over it', async () => {
    const data = b64(await datedPdf(['The lease of the harbour office.'], new Date('2018-01-02T03:04:05Z')));
    const file = [{ filename: 'lease.pdf', content_type: 'application/pdf', data }];
    const path = '/v1/memory/collections/uploads/memories/upload';
    const fromFile = await postForm(shared().url, t.key, path, { files: file });
    expect(fromFile.status, JSON.stringify(fromFile.body)).toBe(201);
    expect(fromFile.body.observed_at).toBe('2018-01-02T03:04:05.000Z');
    const given = await postForm(shared().url, t.key, path, { files: file, observed_at: '2024-05-06T07:08:09Z' });
    expect(given.status, JSON.stringify(given.body)).toBe(201);
    expect(given.body.observed_at).toBe('2024-05-06T07:08:09.000Z');
    const folder = await postForm(shared().url, t.key, '/v1/memory/collections/uploads/memories/folder', { files: file });
    expect(folder.status, JSON.stringify(folder.body)).toBe(201);
    expect((await memory('uploads', folder.body.memories[0].id)).observed_at).toBe('2018-01-02T03:04:05.000Z');
  });
});
