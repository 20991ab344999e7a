import { useCallback, useEffect, useState } from 'react';
import { apiError } from '../api.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  /** Loads again (after a write). */
  reload(): void;
}

/** Data loaded from the API when the component mounts and whenever `deps` change; errors as the service's `detail`. */
export function useApi<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    load()
      .then((d) => {
        if (!live) return;
        setData(d);
        setError(null);
      })
      .catch((err: unknown) => live && setError(apiError(err).detail))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
    // The caller's deps say when to load again; `load` itself is a new function each render.
  }, [...deps, tick]);
  return { data, error, loading, reload: useCallback(() => setTick((t) => t + 1), []) };
}

/** Runs a write: `busy` while it runs, `error` its `detail` if it fails; answers its result, or undefined on failure. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async <T>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (err) {
      setError(apiError(err).detail);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clearError: () => setError(null) };
}
