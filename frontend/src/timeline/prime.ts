import type { DucklmApi, HistoryPage, LedgerEvent } from '../bridge';
import { PAGE_SIZE } from '../lib/timelinePages';

/** SCREEN is about a screenful of rows: what the first read must hold. */
export const SCREEN = 40;

/** FirstRead is what a timeline opening at its end reads first. */
export type FirstRead = [oldest: HistoryPage, newest: HistoryPage | undefined, above: HistoryPage | undefined];

/**
 * firstRead reads, in one round trip, the oldest event (the total, the
 * segments, the clock axis) and — when the view opens at the end (no
 * startSeq) — the last page (offset -1) and the page holding the
 * screenful's first row (-(SCREEN+1): the page before the last when that
 * holds few events, else the same page).
 */
export function firstRead(api: DucklmApi, runId: string, startSeq?: number): Promise<FirstRead> {
  const atEnd = startSeq === undefined;
  return Promise.all([
    api.history(runId, 0, 1),
    atEnd ? api.history(runId, -1, PAGE_SIZE) : Promise.resolve(undefined),
    atEnd ? api.history(runId, -(SCREEN + 1), PAGE_SIZE) : Promise.resolve(undefined),
  ]);
}

/** A first read started before the timeline's code arrived, with the run's live events seen since. */
type Primed = { runId: string; read: Promise<FirstRead>; live: LedgerEvent[]; stop: () => void };

let primed: Primed | undefined;

/** PRIMED_FOR is how long a primed read waits to be taken before it is dropped. */
const PRIMED_FOR = 10_000;

/**
 * primeTimeline starts a timeline's first read at start-up, when the window
 * opens on a timeline at its end, so the read travels while the screen's
 * code loads instead of after it (tests/perf: the first rows from a cold
 * page load). The run's live events are kept from that moment, so none
 * committed between the read and the screen's own subscription is lost.
 */
export function primeTimeline(api: DucklmApi, runId: string): void {
  primed?.stop();
  const live: LedgerEvent[] = [];
  const stop = api.onLedgerEvents((batch) => {
    for (const e of batch) if (e.stream === runId) live.push(e);
  });
  const read = firstRead(api, runId);
  read.catch(() => {}); // a failed read is the screen's to report, when it takes it
  const p: Primed = { runId, read, live, stop };
  primed = p;
  setTimeout(() => {
    if (primed === p) {
      p.stop();
      primed = undefined;
    }
  }, PRIMED_FOR);
}

/**
 * takePrimed hands over the primed first read of runId, if there is one,
 * and a function that ends the live watch and returns the events it saw.
 */
export function takePrimed(runId: string): { read: Promise<FirstRead>; live: () => LedgerEvent[] } | undefined {
  const p = primed;
  if (!p || p.runId !== runId) return undefined;
  primed = undefined;
  return {
    read: p.read,
    live: () => {
      p.stop();
      return p.live;
    },
  };
}
