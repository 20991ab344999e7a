/**
 * Text from outside (mail, a provider's records) as PostgreSQL can keep it: it rejects NUL in text
 * and JSON, and lone surrogates cannot be encoded, so both go. Applied after any cut, so a cut
 * through a surrogate pair leaves nothing behind either.
 */
export const storable = (s: string) => s.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '');
