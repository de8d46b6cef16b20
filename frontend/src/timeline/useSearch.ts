import { useCallback, useEffect, useRef, useState } from 'react';
import { type DucklmApi, type HistoryFilter, toBridgeError } from '../bridge';
import { type Found, withMatches } from '../lib/timelinePages';

/** MATCHES_PER_CALL is how many matches one search call returns at most. */
const MATCHES_PER_CALL = 500;
/** FIRST_ROWS is how many matches a new search gathers before it waits for the view. */
const FIRST_ROWS = 200;

export interface SearchState {
  found?: Found;
  searching: boolean;
  error?: string;
}

/**
 * useSearch searches a run's whole history in the backend, stretch by
 * stretch from the oldest event: a new filter gathers a first screenful of
 * matches, and `more` goes on as the list's end comes into view (or up to a
 * position, for a jump). filter undefined is no search. total is the
 * history's live total, so events that arrive after the search reached the
 * end are searched too.
 */
export function useSearch(api: DucklmApi, runId: string, filter: HistoryFilter | undefined, total: number) {
  const [state, setState] = useState<SearchState>({ searching: false });
  const found = useRef<Found | undefined>(undefined);
  const generation = useRef(0);
  const want = useRef({ rows: FIRST_ROWS, index: -1 });
  const running = useRef<Promise<void> | undefined>(undefined);
  const liveTotal = useRef(total);
  liveTotal.current = total;
  const key = filter ? JSON.stringify(filter) : '';

  const done = (f: Found | undefined) => f !== undefined && f.next >= Math.max(f.total, liveTotal.current);

  const run = useCallback((): Promise<void> => {
    if (running.current) return running.current;
    if (!filter) return Promise.resolve();
    const g = generation.current;
    const p = (async () => {
      setState((s) => ({ ...s, searching: true }));
      try {
        for (;;) {
          const f = found.current;
          if (done(f) || (f && f.rows.length >= want.current.rows && f.next > want.current.index)) break;
          const m = await api.searchHistory(runId, filter, f?.next ?? 0, MATCHES_PER_CALL);
          if (g !== generation.current) return;
          found.current = withMatches(f, m);
          setState({ found: found.current, searching: true });
        }
        if (g === generation.current) setState({ ...(found.current ? { found: found.current } : {}), searching: false });
      } catch (e) {
        if (g === generation.current) setState({ ...(found.current ? { found: found.current } : {}), searching: false, error: toBridgeError(e).message });
      } finally {
        if (g === generation.current) running.current = undefined;
      }
    })();
    running.current = p;
    return p;
    // key stands for filter.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api, runId, key]);

  useEffect(() => {
    generation.current++;
    running.current = undefined;
    found.current = undefined;
    want.current = { rows: FIRST_ROWS, index: -1 };
    setState({ searching: false });
    if (filter) void run();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [run]);

  /** more gathers at least rows matches (or to the end). */
  const more = useCallback(
    (rows: number) => {
      if (rows <= want.current.rows && (found.current?.rows.length ?? 0) >= rows) return;
      want.current = { ...want.current, rows: Math.max(want.current.rows, rows) };
      void run();
    },
    [run],
  );

  /** until searches past position index (or to the end) and resolves with what was found. */
  const until = useCallback(
    async (index: number): Promise<Found | undefined> => {
      want.current = { ...want.current, index: Math.max(want.current.index, index) };
      const g = generation.current;
      // A run in flight may have started before this wish: go again after it.
      while (g === generation.current && !done(found.current) && (found.current?.next ?? 0) <= index) {
        const before = found.current?.next;
        await run();
        if (found.current?.next === before) break; // an error, or nothing to read
      }
      return found.current;
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [run],
  );

  return { search: state, more, until };
}
