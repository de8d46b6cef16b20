// Two branches' events after their shared history, aligned as the issue asks:
// from the fork point, then by world-local time, so "what happened at t=7"
// in one branch sits beside what happened at t=7 in the other — not beside
// whatever came at the same position. Pure, so the view only draws.
import type { LedgerEvent } from '../bridge/types';
import { compact } from './json';

/** AlignedRow is one row of the aligned event diff: the k-th event at world time t on each side. */
export interface AlignedRow {
  t: number;
  /** The first row of its world time (the view labels the time once). */
  first: boolean;
  a?: LedgerEvent;
  b?: LedgerEvent;
  /** Both sides record the same type and payload here. */
  same: boolean;
}

/** Aligned is the event diff aligned by world time, with where the branches forked. */
export interface Aligned {
  rows: AlignedRow[];
  /** The world time the branches forked at (the parent's time a world.forked event records), if either side forked. */
  forkAt?: number;
  /** How many world times appear on either side, and at how many the two sides differ. */
  times: number;
  differing: number;
}

const FORKED = 'world.forked';

/**
 * alignByWorldTime lines up a's and b's events (each in its own order) by
 * world-local time: for each time on either side, ascending, the k-th event
 * of a at that time beside the k-th of b. The fork events themselves lead,
 * as the fork point.
 */
export function alignByWorldTime(a: readonly LedgerEvent[], b: readonly LedgerEvent[]): Aligned {
  const forked = [...a, ...b].find((e) => e.type === FORKED);
  const byTime = (es: readonly LedgerEvent[]) => {
    const m = new Map<number, LedgerEvent[]>();
    for (const e of es) {
      // The fork event is the fork point: it goes first, at the parent's time.
      const t = e.type === FORKED ? e.parentTime : e.worldLocalTime;
      const list = m.get(t) ?? [];
      list.push(e);
      m.set(t, list);
    }
    return m;
  };
  const ma = byTime(a);
  const mb = byTime(b);
  const times = [...new Set([...ma.keys(), ...mb.keys()])].sort((x, y) => x - y);
  const rows: AlignedRow[] = [];
  let differing = 0;
  for (const t of times) {
    const xs = ma.get(t) ?? [];
    const ys = mb.get(t) ?? [];
    // Fork events lead their time on each side.
    xs.sort((p, q) => Number(q.type === FORKED) - Number(p.type === FORKED));
    ys.sort((p, q) => Number(q.type === FORKED) - Number(p.type === FORKED));
    let differs = false;
    for (let k = 0; k < Math.max(xs.length, ys.length); k++) {
      const x = xs[k];
      const y = ys[k];
      const same = x !== undefined && y !== undefined && x.type === y.type && compact(x.payload, 1e6) === compact(y.payload, 1e6);
      if (!same) differs = true;
      const row: AlignedRow = { t, first: k === 0, same };
      if (x) row.a = x;
      if (y) row.b = y;
      rows.push(row);
    }
    if (differs) differing++;
  }
  return { rows, ...(forked ? { forkAt: forked.parentTime } : {}), times: times.length, differing };
}

/** lastTime is the world time of the newest event of a branch, or fallback when it has none. */
export function lastTime(events: readonly LedgerEvent[], fallback?: number): number | undefined {
  let t: number | undefined;
  for (const e of events) t = Math.max(t ?? e.worldLocalTime, e.worldLocalTime);
  return t ?? fallback;
}
