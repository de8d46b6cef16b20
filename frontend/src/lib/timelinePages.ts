// A run's history as the timeline holds it: the total, the fork segments,
// and only the pages of rows it has read, by position. Rows are read page by
// page as the view reaches them and dropped when it goes far away, so a
// million-event history costs a few pages of memory. Pure, so the hooks only
// fetch and the list only draws.
import type { HistoryFilter, HistoryMatches, HistoryPage, LedgerEvent, Segment } from '../bridge/types';
import { type Filter, type Lane, type TimelineRow, checkpointOf, toRows } from './timeline';

/** PAGE_SIZE is how many rows one read holds (the backend allows up to 5000). */
export const PAGE_SIZE = 500;
/** KEEP_PAGES is how many pages a history keeps; the farthest from the view are dropped first. */
export const KEEP_PAGES = 24;

/** Paged is a history with some of its pages read. */
export interface Paged {
  total: number;
  inherited: number;
  segments: readonly Segment[];
  pages: ReadonlyMap<number, readonly TimelineRow[]>;
  /** The oldest and newest events, kept for the clock axis however far the pages go. */
  first?: LedgerEvent;
  last?: LedgerEvent;
}

export const EMPTY_HISTORY: Paged = { total: 0, inherited: 0, segments: [], pages: new Map() };

/** pageOf is the page holding position index. */
export function pageOf(index: number): number {
  return Math.floor(index / PAGE_SIZE);
}

/** expectedRows is how many rows page p holds when read in full. */
export function expectedRows(h: Paged, p: number): number {
  return Math.max(0, Math.min(PAGE_SIZE, h.total - p * PAGE_SIZE));
}

/** missingPages lists the pages covering positions first..last that are not (fully) read. */
export function missingPages(h: Paged, first: number, last: number): number[] {
  if (h.total === 0) return [];
  const from = pageOf(Math.max(0, first));
  const to = pageOf(Math.min(h.total - 1, Math.max(first, last)));
  const out: number[] = [];
  for (let p = from; p <= to; p++) if ((h.pages.get(p)?.length ?? 0) < expectedRows(h, p)) out.push(p);
  return out;
}

/** withPage adds a page read from the backend (its offset a multiple of PAGE_SIZE). */
export function withPage(h: Paged, page: HistoryPage): Paged {
  const rows = toRows(page.events, page.offset, page.inherited);
  const pages = new Map(h.pages);
  pages.set(pageOf(page.offset), rows);
  const total = Math.max(page.total, h.total);
  const next: Paged = { ...h, total, inherited: page.inherited, segments: page.segments.length > 0 ? page.segments : h.segments, pages };
  const head = rows[0];
  if (page.offset === 0 && head) next.first = head.event;
  const tail = rows[rows.length - 1];
  if (tail && tail.index === total - 1) next.last = tail.event;
  return next;
}

/** rowAt is the row at position index, when its page has been read. */
export function rowAt(h: Paged, index: number): TimelineRow | undefined {
  const row = h.pages.get(pageOf(index))?.[index % PAGE_SIZE];
  return row?.index === index ? row : undefined;
}

/**
 * withLive adds live events of the run's own stream. Its events sit at
 * inherited + seq - 1, so each lands exactly: at the end it grows the
 * history (and the last page, when that is read and complete); a gap grows
 * the total, and the page short of rows is read again when in view.
 */
export function withLive(h: Paged, events: readonly LedgerEvent[], ownStream: string): Paged {
  const mine = events.filter((e) => e.stream === ownStream).sort((a, b) => a.seq - b.seq);
  let next: Paged = h;
  for (const e of mine) {
    const index = next.inherited + e.seq - 1;
    if (index < next.total) continue; // already in the history
    const pages = new Map(next.pages);
    const p = pageOf(index);
    const page = pages.get(p) ?? (index % PAGE_SIZE === 0 ? [] : undefined);
    if (page && page.length === index % PAGE_SIZE && index === next.total) {
      const row: TimelineRow = { index, event: e, inherited: false };
      const cp = checkpointOf(e);
      if (cp) row.checkpointId = cp;
      pages.set(p, [...page, row]);
    }
    const segments = next.segments.map((s, i) => (i === next.segments.length - 1 && s.stream === ownStream ? { ...s, toSeq: Math.max(s.toSeq, e.seq) } : s));
    next = { ...next, total: index + 1, pages, segments, last: e };
    if (!next.first) next.first = e;
  }
  return next;
}

/** evict keeps at most keep pages, dropping those farthest from the page at position center. */
export function evict(h: Paged, center: number, keep = KEEP_PAGES): Paged {
  if (h.pages.size <= keep) return h;
  const c = pageOf(center);
  const kept = [...h.pages.keys()].sort((a, b) => Math.abs(a - c) - Math.abs(b - c) || a - b).slice(0, keep);
  return { ...h, pages: new Map(kept.map((p) => [p, h.pages.get(p)!])) };
}

/**
 * indexOfSeq is the position of seq in the history: the run's own event
 * first (its stream is the last segment), then the oldest stream holding
 * that seq. It returns -1 when no event has it.
 */
export function indexOfSeq(h: Paged, seq: number, ownStream: string): number {
  if (!Number.isInteger(seq) || seq < 1) return -1;
  let start = 0;
  let other = -1;
  for (const s of h.segments) {
    if (seq <= s.toSeq) {
      if (s.stream === ownStream) return start + seq - 1;
      if (other < 0) other = start + seq - 1;
    }
    start += s.toSeq;
  }
  return other;
}

/** lanesOfSegments lists the history's streams as lanes, root first. */
export function lanesOfSegments(segments: readonly Segment[]): Lane[] {
  return segments
    .filter((s) => s.toSeq > 0)
    .map((s, index, all) => ({ stream: s.stream, index, inherited: index < all.length - 1, events: s.toSeq }));
}

/** isFiltered reports whether a filter hides anything, so the backend must search. */
export function isFiltered(f: Filter): boolean {
  return f.types.size > 0 || f.reality !== 'all' || f.text !== '';
}

/** toHistoryFilter is the backend's form of the timeline's filter. */
export function toHistoryFilter(f: Filter): HistoryFilter {
  return { types: [...f.types].sort(), reality: f.reality === 'all' ? '' : f.reality, text: f.text, regex: f.regex };
}

/** Found is what a search through a history has found so far. */
export interface Found {
  total: number;
  inherited: number;
  rows: readonly TimelineRow[];
  /** Positions before next have all been searched. */
  next: number;
}

/** withMatches adds the next stretch of a search (it goes on from found.next). */
export function withMatches(found: Found | undefined, m: HistoryMatches): Found {
  const rows = m.matches.map(({ index, event }) => {
    const row: TimelineRow = { index, event, inherited: index < m.inherited };
    const cp = checkpointOf(event);
    if (cp) row.checkpointId = cp;
    return row;
  });
  const before = found && m.from === found.next ? found.rows : [];
  return { total: m.total, inherited: m.inherited, rows: [...before, ...rows], next: m.next };
}

/** searchDone reports whether a search has been through the whole history. */
export function searchDone(f: Found): boolean {
  return f.next >= f.total;
}

/**
 * searchWhole searches a run's whole history to its end (the backend
 * answers in slices), for up to limit matches, and returns their events.
 */
export async function searchWhole(
  search: (runId: string, filter: HistoryFilter, from: number, limit: number) => Promise<HistoryMatches>,
  runId: string,
  filter: HistoryFilter,
  limit: number,
): Promise<LedgerEvent[]> {
  const out: LedgerEvent[] = [];
  for (let from = 0; ; ) {
    const m = await search(runId, filter, from, limit - out.length);
    out.push(...m.matches.map((x) => x.event));
    if (out.length >= limit || m.next >= m.total || m.next <= from) return out;
    from = m.next;
  }
}
