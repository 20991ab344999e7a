import type { Memory } from '../../../src/schemas/memory.ts';

const size = (bytes: number) =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** A memory's files: images previewed from their presigned URL (valid 15 minutes), other files as links. */
export function MemoryImages({ images }: { images: Memory['images'] }) {
  return (
    <section aria-labelledby="images-title">
      <h2 id="images-title">Images and files</h2>
      {images.length === 0 ? (
        <p className="muted">No files attached.</p>
      ) : (
        <ul className="grid" style={{ listStyle: 'none', padding: 0, margin: 0 }}>
          {images.map((img) => (
            <li key={img.index} className="card">
              {img.url && img.content_type.startsWith('image/') ? (
                <figure style={{ margin: 0 }}>
                  <a href={img.url} target="_blank" rel="noreferrer">
                    <img src={img.url} alt={img.caption ?? img.filename} style={{ maxWidth: '100%', maxHeight: '14rem', display: 'block' }} />
                  </a>
                  <figcaption>
                    <strong>{img.filename}</strong> <span className="muted">({size(img.size)})</span>
                    {img.caption && <p style={{ margin: '0.3rem 0 0' }}>{img.caption}</p>}
                  </figcaption>
                </figure>
              ) : (
                <p style={{ margin: 0 }}>
                  {img.url ? (
                    <a href={img.url} target="_blank" rel="noreferrer">
                      {img.filename}
                    </a>
                  ) : (
                    img.filename
                  )}{' '}
                  <span className="muted">
                    ({img.content_type}, {size(img.size)})
                  </span>
                </p>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
