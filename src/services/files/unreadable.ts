/** A file that cannot become text, with a reason a person can act on (the per-file error shown to the tenant). */
export class UnreadableFileError extends Error {}

/**
 * A file over one of the reading limits (docs/contract.md, "Limits"), or one whose reading was
 * stopped (out of memory, out of time): its reason names the limit's setting. It fails at once
 * and is never tried again, as the same bytes would meet the same limit.
 */
export class FileLimitError extends UnreadableFileError {}

/** The limits every heavy read runs under (config `parse`, docs/configuration.md "Reading files"). */
export interface ReadLimits {
  /** Pages of a PDF. */
  pages: number;
  /** Nesting of HTML elements. */
  depth: number;
  /** Bytes an office file's parts declare once unzipped, all together. */
  unzippedBytes: number;
  /** Characters of text a file may give. */
  chars: number;
}
