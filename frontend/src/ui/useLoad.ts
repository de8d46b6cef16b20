import { type DependencyList, useCallback, useEffect, useRef, useState } from 'react';
import { toBridgeError } from '../bridge';

/** Load is an async value's state. Reloads keep the last value while they run. */
export type Load<T> =
  | { status: 'loading'; value?: undefined }
  | { status: 'error'; message: string; value?: T }
  | { status: 'ready'; value: T; reloading: boolean };

/**
 * useLoad runs fn when deps change and whenever reload() is called. A reload
 * keeps showing the last value (no flash of a spinner on live refreshes);
 * answers to superseded calls are dropped.
 */
export function useLoad<T>(fn: () => Promise<T>, deps: DependencyList): [Load<T>, () => void] {
  const [state, setState] = useState<Load<T>>({ status: 'loading' });
  const [tick, setTick] = useState(0);
  const call = useRef(0);
  const last = useRef<T | undefined>(undefined);
  const depsKey = useRef<DependencyList>(deps);
  const depsChanged = depsKey.current.length !== deps.length || depsKey.current.some((d, i) => !Object.is(d, deps[i]));
  if (depsChanged) {
    depsKey.current = deps;
    last.current = undefined;
  }

  useEffect(() => {
    const id = ++call.current;
    setState((s) => (last.current !== undefined && s.status === 'ready' ? { ...s, reloading: true } : last.current === undefined ? { status: 'loading' } : s));
    fn().then(
      (value) => {
        if (id !== call.current) return;
        last.current = value;
        setState({ status: 'ready', value, reloading: false });
      },
      (e: unknown) => {
        if (id !== call.current) return;
        const message = toBridgeError(e).message;
        setState(last.current !== undefined ? { status: 'error', message, value: last.current } : { status: 'error', message });
      },
    );
    // fn is a fresh closure each render; deps say when it means something new.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return [state, reload];
}

/**
 * useThrottled returns a function that calls fn at most once per ms, with a
 * trailing call so the last change is never lost.
 */
export function useThrottled(fn: () => void, ms: number): () => void {
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const lastRun = useRef(0);
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    const wait = lastRun.current + ms - Date.now();
    if (wait <= 0 && timer.current === undefined) {
      lastRun.current = Date.now();
      fnRef.current();
      return;
    }
    if (timer.current !== undefined) return;
    timer.current = setTimeout(
      () => {
        timer.current = undefined;
        lastRun.current = Date.now();
        fnRef.current();
      },
      Math.max(0, wait),
    );
  }, [ms]);
}
