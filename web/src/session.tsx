import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { rpcWithKey, storedKey, storeKey, type ApiOutput } from './api.ts';

/** The signed-in tenant and the key the dashboard signed in with. */
type Me = ApiOutput['admin']['me'];

interface Session {
  /** The signed-in tenant and key; null before sign-in. */
  me: Me | null;
  /** A read-only key sees no write controls. */
  canWrite: boolean;
  /** Only a writable admin key sees the controls of keys, grants and the tenant's settings (docs/access.md, "Key roles"). */
  canAdmin: boolean;
  /** Checks the key against the service (admin.me) and keeps it for this tab. */
  signIn(key: string): Promise<void>;
  signOut(): void;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null>(null);
  const [checked, setChecked] = useState(!storedKey());

  const signIn = useCallback(async (key: string) => {
    const tenant = await rpcWithKey(key).admin.me.query();
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
  const canWrite = !!me && !me.key.read_only;
  return <SessionContext.Provider value={{ me, canWrite, canAdmin: canWrite && me.key.role === 'admin', signIn, signOut }}>{children}</SessionContext.Provider>;
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}
