import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../src/core/context.ts';
import { AppError } from '../src/core/errors.ts';
import { sendError } from '../src/pipeline/http-errors.ts';
import { BlobExistsError, BlobTooLargeError, InvalidBlobKeyError, LocalBlobStore } from '../src/ports/blobs/local.ts';
import { BLOB_ROUTE_PREFIX, type BlobOp, type SignedBlobUrl } from '../src/ports/blobs/signed-url.ts';
import { MAX_FILE_BYTES } from '../src/schemas/files.ts';

/**
 * The local store's presigned URLs: `GET` and `PUT /v1/blobs/{key}?op=&expires=&sig=`. An S3
 * store's URLs point at the bucket, so these routes exist only when the platform store is local.
 * The signature is the only authorisation: no API key is involved.
 */
export async function registerBlobRoutes(server: FastifyInstance, app: App): Promise<void> {
  const store = app.blobs;
  if (!(store instanceof LocalBlobStore)) return;

  /** What a request's URL names (the key, a content type fixed at signing), if its signature allows `op` now; otherwise the error to answer. */
  const authorise = (req: FastifyRequest, op: BlobOp): SignedBlobUrl | AppError => {
    const q = req.url.indexOf('?');
    const path = q < 0 ? req.url : req.url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : req.url.slice(q + 1));
    let key: string;
    try {
      key = path.slice(BLOB_ROUTE_PREFIX.length).split('/').map(decodeURIComponent).join('/');
    } catch {
      return new AppError('BAD_REQUEST', 'The file path is not valid');
    }
    if (query.get('op') !== op) return new AppError('FORBIDDEN', `The link does not allow ${op === 'get' ? 'downloads' : 'uploads'}`);
    const url: SignedBlobUrl = { op, key, expires: Number(query.get('expires')), type: query.get('type') ?? undefined };
    const why = store.checkSignature(url, query.get('sig') ?? '');
    return why ? new AppError('FORBIDDEN', why) : url;
  };

  const fail = (reply: FastifyReply, err: unknown) => {
    if (err instanceof InvalidBlobKeyError) return sendError(reply, new AppError('BAD_REQUEST', err.message));
    if (err instanceof BlobTooLargeError) return sendError(reply, new AppError('PAYLOAD_TOO_LARGE', err.message));
    if (err instanceof BlobExistsError) return sendError(reply, new AppError('CONFLICT', err.message));
    throw err;
  };

  await server.register(async (scope) => {
    // The body is the file: handed over as the raw stream, never parsed or buffered (the
    // server's own parsers would refuse anything but JSON).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

    scope.get(`${BLOB_ROUTE_PREFIX}*`, async (req, reply) => {
      const url = authorise(req, 'get');
      if (url instanceof AppError) return sendError(reply, url);
      try {
        const file = await store.openRead(url.key);
        if (!file) return sendError(reply, new AppError('NOT_FOUND', 'No such file'));
        return (
          reply
            .header('content-type', file.contentType)
            .header('content-length', file.size)
            // Uploaded content served from the API's own origin: never sniffed, and a document
            // (HTML, SVG) runs sandboxed, without scripts or access to the origin.
            .header('x-content-type-options', 'nosniff')
            .header('content-security-policy', "sandbox; default-src 'none'")
            .send(file.stream)
        );
      } catch (err) {
        return fail(reply, err);
      }
    });

    scope.put(`${BLOB_ROUTE_PREFIX}*`, async (req, reply) => {
      const url = authorise(req, 'put');
      if (url instanceof AppError) return sendError(reply, url);
      if (Number(req.headers['content-length']) > MAX_FILE_BYTES) {
        return sendError(reply, new AppError('PAYLOAD_TOO_LARGE', `The file is larger than ${MAX_FILE_BYTES} bytes`));
      }
      const contentType = url.type ?? req.headers['content-type'] ?? 'application/octet-stream';
      // Read without destroying the request when the limit stops the reading: the 413 still has to be answered on it.
      const body = { [Symbol.asyncIterator]: () => req.raw.iterator({ destroyOnReturn: false }) as AsyncIterator<Buffer> };
      try {
        await store.putStream(url.key, body, contentType, MAX_FILE_BYTES);
      } catch (err) {
        if (!req.raw.complete && !(err instanceof BlobTooLargeError) && !(err instanceof BlobExistsError)) {
          return sendError(reply, new AppError('BAD_REQUEST', 'The upload was interrupted'));
        }
        // The rest of an oversize or refused body is read and dropped: left unread, it would stall the
        // connection for the client's next request.
        req.raw.resume();
        return fail(reply, err);
      }
      return reply.code(200).send();
    });
  });
}
