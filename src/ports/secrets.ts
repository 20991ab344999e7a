import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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

/**
 * The master key: ORGMEM_MASTER_KEY (base64, 32 bytes) when set, as production should;
 * otherwise one generated on first start and kept in the data directory (never in the
 * database it protects). An in-memory data directory gets a key for the process's life.
 */
export function loadMasterKey(configured: string | undefined, dataDir: string): Buffer {
  if (configured) return Buffer.from(configured, 'base64');
  if (dataDir.startsWith('memory://')) return randomBytes(32);
  const path = join(dataDir, 'master.key');
  if (existsSync(path)) return Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(path, key.toString('base64'), { mode: 0o600 });
  return key;
}
