import { useCallback, useEffect, useRef, useState } from 'react';
import { type Check, type DucklmApi, type LedgerEvent, type Overview, toBridgeError } from '../bridge';
import { type EventFeed, mergeEvents, startFeed } from '../lib/feed';

/** OverviewState is the overview's load state; once ready it carries the live feed. */
export type OverviewState =
  | { status: 'loading' }
  | { status: 'error'; message: string }
  | { status: 'ready'; overview: Overview; feed: EventFeed };

/** ChecksState is the machine checks' load state. */
export type ChecksState = { status: 'loading' } | { status: 'error'; message: string } | { status: 'ready'; checks: Check[] };

// Live events that arrive while the overview loads wait here; a bound keeps a
// failing load from holding a busy ledger's stream forever.
const MAX_PENDING = 10_000;

// New events may mean new worlds, runs and streams: the counts are asked
// again at most this often while events arrive (the events count is live).
export const COUNTS_REFRESH_MS = 1000;

/**
 * useHome loads what Home shows and keeps it live. It subscribes before it
 * loads the overview so that no event committed in between is missed; the
 * feed's dedupe absorbs the overlap.
 */
export function useHome(api: DucklmApi) {
  const [overview, setOverview] = useState<OverviewState>({ status: 'loading' });
  const [checks, setChecks] = useState<ChecksState>({ status: 'loading' });
  const [overviewAttempt, setOverviewAttempt] = useState(0);
  const [checksAttempt, setChecksAttempt] = useState(0);
  const ready = useRef(false);
  const pending = useRef<LedgerEvent[]>([]);
  const countsTimer = useRef<ReturnType<typeof setTimeout>>(undefined);

  // Events that arrive while the counts are asked may postdate the answer:
  // then they are asked once more after it.
  const countsAgain = useRef(false);

  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
      clearTimeout(countsTimer.current);
    };
  }, []);

  const askCounts = useCallback(() => {
    if (countsTimer.current !== undefined) {
      countsAgain.current = true;
      return;
    }
    countsTimer.current = setTimeout(() => {
      countsAgain.current = false; // what came before this question, it answers
      const done = () => {
        countsTimer.current = undefined;
        if (countsAgain.current && mounted.current) askCounts();
      };
      api.overview().then(
        (o) => {
          setOverview((s) => (s.status === 'ready' ? { ...s, overview: { ...s.overview, counts: o.counts } } : s));
          done();
        },
        // The tiles keep their last counts; the next batch asks again.
        () => {
          countsAgain.current = false;
          done();
        },
      );
    }, COUNTS_REFRESH_MS);
  }, [api]);

  useEffect(
    () =>
      api.onLedgerEvents((batch) => {
        if (!ready.current) {
          pending.current.push(...batch);
          if (pending.current.length > MAX_PENDING) pending.current.splice(0, pending.current.length - MAX_PENDING);
          return;
        }
        setOverview((s) => {
          if (s.status !== 'ready') return s;
          const feed = mergeEvents(s.feed, batch);
          return feed === s.feed ? s : { ...s, feed };
        });
        askCounts();
      }),
    [api, askCounts],
  );

  useEffect(() => {
    let cancelled = false;
    ready.current = false;
    setOverview({ status: 'loading' });
    api.overview().then(
      (o) => {
        if (cancelled) return;
        const waiting = pending.current.splice(0);
        ready.current = true;
        setOverview({ status: 'ready', overview: o, feed: mergeEvents(startFeed(o.recentEvents, o.counts.events), waiting) });
      },
      (e: unknown) => {
        if (!cancelled) setOverview({ status: 'error', message: toBridgeError(e).message });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [api, overviewAttempt]);

  useEffect(() => {
    let cancelled = false;
    setChecks({ status: 'loading' });
    api.checks().then(
      (list) => {
        if (!cancelled) setChecks({ status: 'ready', checks: list });
      },
      (e: unknown) => {
        if (!cancelled) setChecks({ status: 'error', message: toBridgeError(e).message });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [api, checksAttempt]);

  const rerunChecks = useCallback(() => setChecksAttempt((n) => n + 1), []);
  const retry = useCallback(() => {
    setOverviewAttempt((n) => n + 1);
    setChecksAttempt((n) => n + 1);
  }, []);

  return { overview, checks, retry, rerunChecks };
}
