import { useCallback, useEffect, useRef, useState } from 'react';
import { type DucklmApi, type LedgerEvent, toBridgeError } from '../bridge';
import { type TimelineRow, mergeLive, toRows } from '../lib/timeline';

/** PAGE is how many events one History call asks for (the backend allows up to 5000). */
export const PAGE = 2000;
/** MAX_EVENTS bounds what the timeline holds in memory. */
export const MAX_EVENTS = 200_000;

export type HistoryState =
  | { status: 'loading'; loaded: number; total?: number }
  | { status: 'error'; message: string }
  | { status: 'ready'; rows: TimelineRow[]; total: number; inherited: number; capped: boolean };

/**
 * useHistory reads a run's full history page by page (by position, oldest
 * first), reporting progress, then follows the run's own stream live.
 */
export function useHistory(api: DucklmApi, runId: string) {
  const [state, setState] = useState<HistoryState>({ status: 'loading', loaded: 0 });
  const [attempt, setAttempt] = useState(0);
  const pending = useRef<LedgerEvent[]>([]);
  const ready = useRef(false);

  useEffect(() => {
    let cancelled = false;
    ready.current = false;
    pending.current = [];
    setState({ status: 'loading', loaded: 0 });
    (async () => {
      let offset = 0;
      let total = Infinity;
      let inherited = 0;
      const events: LedgerEvent[] = [];
      while (offset < total && events.length < MAX_EVENTS) {
        const page = await api.history(runId, offset, PAGE);
        if (cancelled) return;
        total = page.total;
        inherited = page.inherited;
        events.push(...page.events);
        if (page.events.length === 0) break;
        offset = page.offset + page.events.length;
        setState({ status: 'loading', loaded: events.length, total });
      }
      if (cancelled) return;
      ready.current = true;
      const rows = mergeLive(toRows(events, 0, inherited), pending.current.splice(0), runId, inherited);
      setState({ status: 'ready', rows, total: Math.max(total === Infinity ? 0 : total, rows.length), inherited, capped: events.length < total });
    })().catch((e: unknown) => {
      if (!cancelled) setState({ status: 'error', message: toBridgeError(e).message });
    });
    return () => {
      cancelled = true;
    };
  }, [api, runId, attempt]);

  useEffect(
    () =>
      api.onLedgerEvents((batch) => {
        const mine = batch.filter((e) => e.stream === runId);
        if (mine.length === 0) return;
        if (!ready.current) {
          pending.current.push(...mine);
          return;
        }
        setState((s) => {
          if (s.status !== 'ready') return s;
          const rows = mergeLive(s.rows, mine, runId, s.inherited);
          return rows === s.rows ? s : { ...s, rows, total: Math.max(s.total, rows.length) };
        });
      }),
    [api, runId],
  );

  const retry = useCallback(() => setAttempt((n) => n + 1), []);
  return { state, retry };
}
