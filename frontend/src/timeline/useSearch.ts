import { useCallback, useEffect, useRef, useState } from 'react';
import { type DucklmApi, type HistoryFilter, toBridgeError } from '../bridge';
import { type Found, withMatches } from '../lib/timelinePages';

/** MATCHES_PER_CALL is how many matches one search call returns at most. */
const MATCHES_PER_CALL = 500;
/** FIRST_ROWS is how many matches a new search gathers before it waits for the view. */
const FIRST_ROWS = 200;
/** MORE_ROWS is how many more matches "Find more" asks for. */
export const MORE_ROWS = 500;

export interface SearchState {
  found?: Found;
  searching: boolean;
  /** The user stopped the search before it reached the end. */
  stopped: boolean;
  error?: string;
}

const IDLE: SearchState = { searching: false, stopped: false };

/**
 * useSearch searches a run's whole history in the backend, stretch by
 * stretch from the oldest event. Each backend call answers after a slice of
 * time with what it found and how far it got, so matches and progress
 * stream in while it goes on. A new filter gathers a first screenful of
 * matches; `more` goes on as the list's end comes into view, `findMore`
 * asks for another batch (and goes on after a stop), `stop` stops between
 * calls, `until` searches up to a position (for a jump). filter undefined is
 * no search. total is the history's live total, so events that arrive after
 * the search reached the end are searched too.
 */
export function useSearch(api: DucklmApi, runId: string, filter: HistoryFilter | undefined, total: number) {
  const [state, setState] = useState<SearchState>(IDLE);
  const found = useRef<Found | undefined>(undefined);
  const generation = useRef(0);
  const want = useRef({ rows: FIRST_ROWS, index: -1 });
  const stopped = useRef(false);
  const running = useRef<Promise<void> | undefined>(undefined);
  const liveTotal = useRef(total);
  liveTotal.current = total;
  const key = filter ? JSON.stringify(filter) : '';

  const done = (f: Found | undefined) => f !== undefined && f.next >= Math.max(f.total, liveTotal.current);
  const settled = (g: number, extra: Partial<SearchState> = {}) => {
    if (g !== generation.current) return;
    setState({ ...(found.current ? { found: found.current } : {}), searching: false, stopped: stopped.current && !done(found.current), ...extra });
  };

  const run = useCallback((): Promise<void> => {
    if (running.current) return running.current;
    if (!filter || stopped.current) return Promise.resolve();
    const g = generation.current;
    const p = (async () => {
      setState((s) => ({ ...s, searching: true, stopped: false }));
      try {
        for (;;) {
          const f = found.current;
          if (stopped.current || done(f) || (f && f.rows.length >= want.current.rows && f.next > want.current.index)) break;
          const m = await api.searchHistory(runId, filter, f?.next ?? 0, MATCHES_PER_CALL);
          if (g !== generation.current) return;
          found.current = withMatches(f, m);
          if (!stopped.current) setState({ found: found.current, searching: true, stopped: false });
        }
        settled(g);
      } catch (e) {
        settled(g, { error: toBridgeError(e).message });
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
    stopped.current = false;
    want.current = { rows: FIRST_ROWS, index: -1 };
    setState(IDLE);
    if (filter) void run();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [run]);

  /** more gathers at least rows matches (or to the end); a stopped search stays stopped. */
  const more = useCallback(
    (rows: number) => {
      if (rows <= want.current.rows && (found.current?.rows.length ?? 0) >= rows) return;
      want.current = { ...want.current, rows: Math.max(want.current.rows, rows) };
      void run();
    },
    [run],
  );

  /** findMore asks for MORE_ROWS more matches than are found, after a stop too. */
  const findMore = useCallback(() => {
    stopped.current = false;
    want.current = { ...want.current, rows: Math.max(want.current.rows, (found.current?.rows.length ?? 0) + MORE_ROWS) };
    void run();
  }, [run]);

  /** stop stops the search between two calls; what it found stays. */
  const stop = useCallback(() => {
    if (!running.current) return;
    stopped.current = true;
    settled(generation.current);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  /** until searches past position index (or to the end) and resolves with what was found. */
  const until = useCallback(
    async (index: number): Promise<Found | undefined> => {
      stopped.current = false;
      want.current = { ...want.current, index: Math.max(want.current.index, index) };
      const g = generation.current;
      // A run in flight may have started before this wish: go again after it.
      while (g === generation.current && !done(found.current) && (found.current?.next ?? 0) <= index) {
        const before = found.current?.next;
        await run();
        if (found.current?.next === before) break; // an error, a stop, or nothing to read
      }
      return found.current;
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [run],
  );

  return { search: state, more, findMore, stop, until };
}
