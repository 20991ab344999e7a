import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { api, storedKey, storeKey } from './api.ts';
import type { Me } from './types.ts';

interface Session {
  /** The signed-in tenant and key; null before sign-in. */
  me: Me | null;
  /** A read-only key sees no write controls. */
  canWrite: boolean;
  /** Checks the key against the service (GET /v1/memory/admin/me) and keeps it for this tab. */
  signIn(key: string): Promise<void>;
  signOut(): void;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null>(null);
  const [checked, setChecked] = useState(!storedKey());

  const signIn = useCallback(async (key: string) => {
    const tenant = await api<Me>('GET', '/v1/memory/admin/me', { key });
    storeKey(key);
    setMe(tenant);
  }, []);
  const signOut = useCallback(() => {
    storeKey(null);
    setMe(null);
  }, []);

  // A key kept from earlier in this tab is checked again on load (it may have been revoked).
  useEffect(() => {
    const key = storedKey();
    if (!key) return;
    signIn(key)
      .catch(() => storeKey(null))
      .finally(() => setChecked(true));
  }, [signIn]);

  if (!checked) return <p className="muted pad">Loading…</p>;
  return <SessionContext.Provider value={{ me, canWrite: !!me && !me.key.read_only, signIn, signOut }}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}
