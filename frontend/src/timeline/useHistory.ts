import { useCallback, useEffect, useRef, useState } from 'react';
import { type DucklmApi, type LedgerEvent, toBridgeError } from '../bridge';
import { EMPTY_HISTORY, PAGE_SIZE, type Paged, evict, indexOfSeq, missingPages, pageOf, withLive, withPage } from '../lib/timelinePages';
import { type FirstRead, SCREEN, firstRead, takePrimed } from './prime';

/** OVERSCAN is how many rows beyond the view are read ahead, each way. */
const OVERSCAN = 150;

export type HistoryState =
  | { status: 'loading' }
  | { status: 'error'; message: string }
  | { status: 'ready'; history: Paged; pageError?: string };

/**
 * useHistory reads a run's history page by page, by position: first the
 * oldest page (for the total, the fork segments and the clock axis) and the
 * page the view opens on (the end, or startSeq), then whatever pages the
 * view reaches (see `show`), the nearest first, dropping pages far away. It
 * follows the run's own stream live.
 */
export function useHistory(api: DucklmApi, runId: string, startSeq?: number) {
  const [state, setState] = useState<HistoryState>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const history = useRef<Paged>(EMPTY_HISTORY);
  const pending = useRef<LedgerEvent[]>([]);
  const ready = useRef(false);
  const generation = useRef(0);
  const wanted = useRef<[number, number]>([0, 0]);
  const pumping = useRef(false);

  const publish = useCallback((h: Paged, pageError?: string) => {
    history.current = h;
    setState(pageError ? { status: 'ready', history: h, pageError } : { status: 'ready', history: h });
  }, []);

  // Reads the pages the latest view needs, one at a time, nearest first: a
  // fast scroll past a thousand pages reads only where it stops.
  const pump = useCallback(async () => {
    if (pumping.current || !ready.current) return;
    pumping.current = true;
    const g = generation.current;
    // A page read once in this pass and still short is not read again until
    // the view moves (the backend had no more of it).
    const tried = new Set<number>();
    try {
      for (;;) {
        const [first, last] = wanted.current;
        const center = Math.round((first + last) / 2);
        const missing = missingPages(history.current, first - OVERSCAN, last + OVERSCAN).filter((p) => !tried.has(p));
        if (missing.length === 0) break;
        missing.sort((a, b) => Math.abs(a - pageOf(center)) - Math.abs(b - pageOf(center)));
        tried.add(missing[0]!);
        const page = await api.history(runId, missing[0]! * PAGE_SIZE, PAGE_SIZE);
        if (g !== generation.current) return;
        publish(evict(withPage(history.current, page), center));
      }
    } catch (e) {
      if (g === generation.current) publish(history.current, `Some events could not be read: ${toBridgeError(e).message}`);
    } finally {
      if (g === generation.current) pumping.current = false;
    }
  }, [api, runId, publish]);

  /** show tells the hook which positions are in view, so it reads their pages. */
  const show = useCallback(
    (first: number, last: number) => {
      wanted.current = [first, last];
      void pump();
    },
    [pump],
  );

  useEffect(() => {
    const g = ++generation.current;
    ready.current = false;
    pumping.current = false;
    pending.current = [];
    history.current = EMPTY_HISTORY;
    setState({ status: 'loading' });
    (async () => {
      // One round trip (see firstRead), started at start-up when the window
      // opened here (primeTimeline). The page short of rows is read in full
      // when in view.
      const early = startSeq === undefined && attempt === 0 ? takePrimed(runId) : undefined;
      let read: FirstRead;
      try {
        read = await (early?.read ?? firstRead(api, runId, startSeq));
      } finally {
        // What the start-up watch saw before this hook listened (withLive drops repeats).
        if (early) pending.current.unshift(...early.live());
      }
      const [oldest, newest, above] = read;
      if (g !== generation.current) return;
      let h = withPage(EMPTY_HISTORY, oldest);
      if (above && above.offset !== newest?.offset) h = withPage(h, above);
      if (newest) h = withPage(h, newest);
      const at = startSeq !== undefined ? indexOfSeq(h, startSeq, runId) : -1;
      const target = at >= 0 ? at : h.total - 1;
      // Whatever else a screenful around there needs, read together.
      const around = await Promise.all(missingPages(h, target - SCREEN, target + SCREEN).map((p) => api.history(runId, p * PAGE_SIZE, PAGE_SIZE)));
      if (g !== generation.current) return;
      for (const page of around) h = withPage(h, page);
      h = withLive(h, pending.current.splice(0), runId);
      wanted.current = [target, target];
      ready.current = true;
      performance.mark('timeline:history', { detail: { total: h.total, pages: h.pages.size } });
      publish(h);
    })().catch((e: unknown) => {
      if (g === generation.current) setState({ status: 'error', message: toBridgeError(e).message });
    });
    return () => {
      generation.current++;
    };
    // startSeq only chooses where the first read lands; a later one is a jump.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api, runId, attempt, publish]);

  useEffect(
    () =>
      api.onLedgerEvents((batch) => {
        const mine = batch.filter((e) => e.stream === runId);
        if (mine.length === 0) return;
        if (!ready.current) {
          pending.current.push(...mine);
          return;
        }
        const h = withLive(history.current, mine, runId);
        if (h !== history.current) publish(h);
      }),
    [api, runId, publish],
  );

  const retry = useCallback(() => {
    if (ready.current) {
      publish(history.current);
      void pump();
    } else setAttempt((n) => n + 1);
  }, [publish, pump]);
  return { state, retry, show };
}
