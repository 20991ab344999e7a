import { v7 } from 'uuid';

/** Time-ordered UUIDs (v7): new rows land at the end of their indexes. */
export const newId = (): string => v7();

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A malformed id in a path is "not found", never a database error. */
export const isUuid = (s: string): boolean => UUID.test(s);

export const iso = (d: Date | string | null | undefined): string | null => (d == null ? null : (d instanceof Date ? d : new Date(d)).toISOString());
