import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Queryable } from './db/db.ts';

/** Encrypts credentials at rest (BYO configs, connector tokens, webhook secrets). */
export interface Secrets {
  encrypt(plain: string): string;
  decrypt(sealed: string): string;
}

const VERSION = 'v1';

/** AES-256-GCM; the sealed form is `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
export function aesGcmSecrets(key: Buffer): Secrets {
  if (key.length !== 32) throw new Error('The master key must be 32 bytes');
  return {
    encrypt(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
    },
    decrypt(sealed) {
      const [version, iv, tag, data] = sealed.split('.');
      if (version !== VERSION || !iv || !tag || data === undefined) throw new Error('Not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}

export interface MasterKey {
  key: Buffer;
  /** Where it came from, for the error naming the fix; null: made for this process only. */
  source: string | null;
  /** The file a key kept on disk lives in (the data directory's master.key). */
  file: string | null;
}

/**
 * The master key: ORGMEM_MASTER_KEY (base64, 32 bytes) when set, as a deployment of several
 * machines must; otherwise one generated on first start and kept in the data directory (never in
 * the database it protects), which every process of the same user on the machine shares. An
 * in-memory data directory gets a key for the process's life.
 */
export function loadMasterKey(configured: string | undefined, dataDir: string): MasterKey {
  const file = dataDir.startsWith('memory://') ? null : join(dataDir, 'master.key');
  if (configured) return { key: Buffer.from(configured, 'base64'), source: 'ORGMEM_MASTER_KEY', file };
  if (!file) return { key: randomBytes(32), source: null, file };
  mkdirSync(dataDir, { recursive: true });
  try {
    // Exclusive create: processes starting together keep whichever key was written first.
    writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return { key: Buffer.from(readFileSync(file, 'utf8').trim(), 'base64'), source: file, file };
}

export class MasterKeyMismatchError extends Error {}

const CHECK_TEXT = 'orgmem master key';

/**
 * Refuses to start with a master key that cannot open the database's secrets, instead of
 * failing on each one later. The first process with a lasting key records a value sealed with
 * it; a database from before that record is checked against one of its stored secrets. A key
 * made for one process never becomes the database's key (its secrets die with it anyway).
 */
export async function checkMasterKey(db: Queryable, secrets: Secrets, masterKey: MasterKey): Promise<void> {
  const opens = (sealed: string) => {
    try {
      secrets.decrypt(sealed);
      return true;
    } catch {
      return false;
    }
  };
  const recorded = async () => (await db.query<{ sealed: string }>(`select value #>> '{}' as sealed from settings where key = 'master_key_check'`))[0]?.sealed;
  let sealed = await recorded();
  if (!sealed) {
    const [stored] = await db.query<{ sealed: string }>(
      `select api_key_sealed as sealed from extraction_configs where api_key_sealed is not null
       union all select secret_sealed from webhooks
       union all select access_key_sealed from storage_configs
       limit 1`,
    );
    if (stored && !opens(stored.sealed)) throw mismatch(masterKey);
    if (!masterKey.source) return;
    await db.query(`insert into settings (key, value) values ('master_key_check', to_jsonb($1::text)) on conflict (key) do nothing`, [
      secrets.encrypt(CHECK_TEXT),
    ]);
    sealed = (await recorded())!;
  }
  if (!opens(sealed)) throw mismatch(masterKey);
}

function mismatch({ source, file }: MasterKey) {
  const from = source === 'ORGMEM_MASTER_KEY' ? 'ORGMEM_MASTER_KEY' : source ? `the key file ${source}` : 'a key made for this process only';
  return new MasterKeyMismatchError(
    `The master key (${from}) cannot decrypt the secrets stored in this database, which was set up with another key. ` +
      `Start every orgmem process on this database with that key: in ORGMEM_MASTER_KEY (base64)${file ? `, or, with ORGMEM_MASTER_KEY unset, in ${file}` : ''}.`,
  );
}
