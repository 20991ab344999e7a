import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { endCookieSession, readCookieSession, rpc, rpcWithKey, setCsrf, storedKey, storeKey, type ApiOutput, type CookieSession } from './api.ts';

/** The signed-in tenant and the key the dashboard signed in with. */
type Me = ApiOutput['admin']['me'];

interface Session {
  /** The signed-in tenant and key (for a person's session, the person as the key); null before sign-in. */
  me: Me | null;
  /** The person signed in through the organization's identity provider (docs/sign-in.md); null with a pasted key. */
  person: CookieSession['person'] | null;
  /** A read-only key sees no write controls. */
  canWrite: boolean;
  /** Only a writable admin key sees the controls of keys, grants and the tenant's settings (docs/access.md, "Key roles"). */
  canAdmin: boolean;
  /** Checks the key against the service (admin.me) and keeps it for this tab. */
  signIn(key: string): Promise<void>;
  /** Forgets the key, or ends the person's session. */
  signOut(): Promise<void>;
}

const SessionContext = createContext<Session | null>(null);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [me, setMe] = useState<Me | null>(null);
  const [person, setPerson] = useState<CookieSession['person'] | null>(null);
  const [checked, setChecked] = useState(false);

  const signIn = useCallback(async (key: string) => {
    const tenant = await rpcWithKey(key).admin.me.query();
    storeKey(key);
    setMe(tenant);
  }, []);
  const signOut = useCallback(async () => {
    if (person) await endCookieSession();
    setCsrf(null);
    setPerson(null);
    storeKey(null);
    setMe(null);
  }, [person]);

  // A key kept from earlier in this tab is checked again on load (it may have been revoked);
  // without one, the session cookie of a person signed in through the organization, if any.
  useEffect(() => {
    const key = storedKey();
    const check = key
      ? signIn(key).catch(() => storeKey(null))
      : readCookieSession().then(async (session) => {
          if (!session) return;
          setCsrf(session.csrf);
          setMe(await rpc.admin.me.query());
          setPerson(session.person);
        });
    void check.catch(() => setCsrf(null)).finally(() => setChecked(true));
  }, [signIn]);

  if (!checked) return <p className="muted pad">Loading…</p>;
  const canWrite = !!me && !me.key.read_only;
  return (
    <SessionContext.Provider value={{ me, person, canWrite, canAdmin: canWrite && me.key.role === 'admin', signIn, signOut }}>
      {children}
    </SessionContext.Provider>
  );
}

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside SessionProvider');
  return session;
}
