import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Loaded } from './load.ts';

/**
 * Like useLoad, and then again every `intervalMs` while the page is visible (and at once when it
 * becomes visible again), so a list follows the service without a manual refresh. One request
 * at a time; an answer to an older request (deps changed meanwhile) is dropped.
 */
export function usePolled<T>(load: () => Promise<T>, deps: unknown[], intervalMs: number): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: undefined, loading: true });
  const latest = useRef(load);
  latest.current = load;
  const generation = useRef(0);
  const inflight = useRef(false);
  const run = useCallback((force: boolean) => {
    if (inflight.current && !force) return;
    const mine = ++generation.current;
    inflight.current = true;
    setState((s) => ({ ...s, loading: true }));
    latest.current().then(
      (data) => {
        if (mine !== generation.current) return;
        inflight.current = false;
        setState({ data, error: undefined, loading: false });
      },
      (error: unknown) => {
        if (mine !== generation.current) return;
        inflight.current = false;
        setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
  }, []);
  useEffect(() => {
    run(true);
    const tick = () => {
      if (document.visibilityState === 'visible') run(false);
    };
    const timer = setInterval(tick, intervalMs);
    document.addEventListener('visibilitychange', tick);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', tick);
      generation.current++;
      inflight.current = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  const reload = useCallback(() => run(true), [run]);
  return { ...state, reload };
}
