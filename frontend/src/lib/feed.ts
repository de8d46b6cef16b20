// The recent-events feed on Home: the overview's snapshot, then live batches
// merged on top. Delivery is at least once, so events are deduplicated on
// (stream, seq), and the events count only grows for events it has not
// counted yet.
import type { LedgerEvent } from '../bridge/types';

/** FEED_LIMIT is how many recent events Home keeps. */
export const FEED_LIMIT = 50;

/** EventFeed is the newest-first list of recent events and the events count. */
export interface EventFeed {
  /** Newest first, at most `limit`. */
  readonly events: readonly LedgerEvent[];
  /** Events in the ledger, as far as this page knows. */
  readonly total: number;
  /**
   * The ledger position through which `total` already counts. The ledger
   * assigns positions 1, 2, 3… at commit, so the overview's count is also
   * the last position it includes.
   */
  readonly countedThrough: number;
  /** Keys of listed events that arrived live (the table highlights them). */
  readonly live: ReadonlySet<string>;
  readonly limit: number;
}

/** eventKey identifies an event for deduplication. */
export function eventKey(e: Pick<LedgerEvent, 'stream' | 'seq'>): string {
  return `${e.stream}\u0000${e.seq}`;
}

/** newestFirst orders by commit position, then by seq within a stream. */
function newestFirst(a: LedgerEvent, b: LedgerEvent): number {
  return b.pos - a.pos || b.seq - a.seq;
}

function uniqueNewestFirst(events: readonly LedgerEvent[], limit: number): LedgerEvent[] {
  const seen = new Set<string>();
  const out: LedgerEvent[] = [];
  for (const e of [...events].sort(newestFirst)) {
    const k = eventKey(e);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(e);
  }
  return out.slice(0, limit);
}

/** startFeed builds the feed from an overview's recent events and events count. */
export function startFeed(recent: readonly LedgerEvent[], total: number, limit = FEED_LIMIT): EventFeed {
  return {
    events: uniqueNewestFirst(recent, limit),
    total,
    countedThrough: total,
    live: new Set(),
    limit,
  };
}

/**
 * mergeEvents adds a live batch: events already listed are ignored, the list
 * keeps the newest `limit`, and `total` grows by the events past
 * `countedThrough` (each counted once, even when delivered twice). Returns the
 * same feed object when nothing changed.
 */
export function mergeEvents(feed: EventFeed, incoming: readonly LedgerEvent[]): EventFeed {
  if (incoming.length === 0) return feed;
  const listed = new Set(feed.events.map(eventKey));
  const seenNow = new Set<string>();
  const added: LedgerEvent[] = [];
  let total = feed.total;
  let countedThrough = feed.countedThrough;
  // Batches come in commit order; sorting keeps the count right if a
  // transport ever interleaves them.
  for (const e of [...incoming].sort((a, b) => a.pos - b.pos)) {
    const k = eventKey(e);
    if (seenNow.has(k)) continue;
    seenNow.add(k);
    const isNewToList = !listed.has(k);
    if (e.pos > countedThrough) {
      total += 1;
      countedThrough = e.pos;
    } else if (e.pos <= 0 && isNewToList) {
      // A transport without positions: the list is the only memory there is.
      total += 1;
    }
    if (isNewToList) added.push(e);
  }
  if (added.length === 0 && total === feed.total) return feed;
  const events = uniqueNewestFirst([...added, ...feed.events], feed.limit);
  const kept = new Set(events.map(eventKey));
  const live = new Set<string>();
  for (const k of feed.live) if (kept.has(k)) live.add(k);
  for (const e of added) if (kept.has(eventKey(e))) live.add(eventKey(e));
  return { events, total, countedThrough, live, limit: feed.limit };
}
