import { useCallback, useEffect, useRef, useState } from 'react';
import { type DucklmApi, type WorldListItem, type WorldQuery, toBridgeError } from '../bridge';

/** WorldList is a list of worlds read a page at a time from the backend. */
export type WorldList = {
  status: 'loading' | 'ready' | 'error';
  items: WorldListItem[];
  /** Every world the query selects, on all pages. */
  total: number;
  /** The deliberation branches the query matched but left out (withoutBranches). */
  branches: number;
  /** There are more pages to read. */
  hasMore: boolean;
  loadingMore: boolean;
  error?: string;
  /** Reads the next page and appends it. */
  more(): void;
  /** Reads again what is shown (at least the first page). */
  reload(): void;
};

type State = Omit<WorldList, 'more' | 'reload' | 'hasMore'> & { next?: string | undefined };

/** The backend's page sizes (Go: sqlite.DefaultWorldPage, MaxWorldPage). */
const DEFAULT_PAGE = 100;
const MAX_PAGE = 500;

/**
 * useWorldList reads the worlds a query selects, newest first, a page at a
 * time: thousands of worlds never travel at once. A new query starts again
 * from the first page, a reload reads again what is shown (the last list
 * stays up meanwhile); answers to superseded calls are dropped. A null
 * query reads nothing yet.
 */
export function useWorldList(api: DucklmApi, query: Omit<WorldQuery, 'after'> | null): WorldList {
  const key = query === null ? '' : JSON.stringify(query);
  const [state, setState] = useState<State>({ status: 'loading', items: [], total: 0, branches: 0, loadingMore: false });
  const [tick, setTick] = useState(0);
  const call = useRef(0);
  const stateRef = useRef(state);
  stateRef.current = state;

  const lastKey = useRef(key);

  useEffect(() => {
    const id = ++call.current;
    if (key === '') return;
    const q = JSON.parse(key) as WorldQuery;
    // A reload of the same list (Refresh, or the ledger moved) reads as many
    // worlds as are shown, up to a page's most: it does not fold the list
    // back to its first page under the reader's eyes.
    if (lastKey.current === key) q.limit = Math.min(MAX_PAGE, Math.max(q.limit ?? DEFAULT_PAGE, stateRef.current.items.length));
    lastKey.current = key;
    api.listWorlds(q).then(
      (p) => {
        if (id === call.current) setState({ status: 'ready', items: p.worlds, total: p.total, branches: p.branches ?? 0, next: p.next, loadingMore: false });
      },
      (e: unknown) => {
        if (id === call.current) setState((s) => ({ ...s, status: 'error', loadingMore: false, error: toBridgeError(e).message }));
      },
    );
  }, [api, key, tick]);

  const more = useCallback(() => {
    const s = stateRef.current;
    if (!s.next || s.loadingMore || key === '') return;
    const id = ++call.current;
    setState({ ...s, loadingMore: true });
    api.listWorlds({ ...(JSON.parse(key) as WorldQuery), after: s.next }).then(
      (p) => {
        if (id !== call.current) return;
        setState((cur) => {
          // A world made since the first page moves everything down by one;
          // the cursor keeps pages exact, so only a reload shows it.
          const have = new Set(cur.items.map((w) => w.id));
          return {
            status: 'ready',
            items: [...cur.items, ...p.worlds.filter((w) => !have.has(w.id))],
            total: p.total,
            branches: p.branches ?? 0,
            next: p.next,
            loadingMore: false,
          };
        });
      },
      (e: unknown) => {
        if (id === call.current) setState((cur) => ({ ...cur, loadingMore: false, error: toBridgeError(e).message }));
      },
    );
  }, [api, key]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  const { next, ...shown } = state;
  return { ...shown, hasMore: next !== undefined && next !== '', more, reload };
}

/** branchesLine says how many deliberation branches a list left out: "600 deliberation branches are not listed." */
export function branchesLine(n: number, text: string): string {
  const what = n === 1 ? 'deliberation branch' : 'deliberation branches';
  const verb = n === 1 ? (text ? 'matches but is' : 'is') : text ? 'match but are' : 'are';
  return `${n.toLocaleString('en')} ${what} ${verb} not listed.`;
}
