import { describe, expect, it } from 'vitest';
import type { HistoryFilter, HistoryMatches, HistoryPage, LedgerEvent } from '../bridge/types';
import { event } from '../test/fixtures';
import { NO_FILTER } from './timeline';
import {
  EMPTY_HISTORY,
  KEEP_PAGES,
  PAGE_SIZE,
  evict,
  expectedRows,
  indexOfSeq,
  isFiltered,
  lanesOfSegments,
  missingPages,
  rowAt,
  searchDone,
  searchWhole,
  toHistoryFilter,
  withLive,
  withMatches,
  withPage,
} from './timelinePages';

const ROOT = 'run_root';
const OWN = 'run_own';
const INHERITED = 300;

/** ev is the event at position index of a history whose first 300 positions are the root's. */
function ev(index: number, type = 'world.step'): LedgerEvent {
  const own = index >= INHERITED;
  return event({ pos: index + 1, seq: own ? index - INHERITED + 1 : index + 1, stream: own ? OWN : ROOT, type, worldLocalTime: index });
}

function page(offset: number, total: number, limit = PAGE_SIZE): HistoryPage {
  const events = [];
  for (let i = offset; i < Math.min(total, offset + limit); i++) events.push(ev(i, i % 100 === 7 ? 'world.checkpoint' : 'world.step'));
  for (const e of events) if (e.type === 'world.checkpoint') e.payload = { checkpointId: `cpt_${e.pos}` };
  return {
    total,
    offset,
    events,
    inherited: INHERITED,
    segments: [
      { stream: ROOT, worldId: 'wld_root', toSeq: INHERITED },
      { stream: OWN, worldId: 'wld_own', toSeq: total - INHERITED },
    ],
  };
}

describe('paged history', () => {
  it('reads the pages the view covers, and only those', () => {
    let h = withPage(EMPTY_HISTORY, page(0, 2_000));
    expect(h.total).toBe(2_000);
    expect(missingPages(h, 0, 499)).toEqual([]);
    expect(missingPages(h, 480, 1_020)).toEqual([1, 2]);
    expect(missingPages(h, 1_900, 5_000)).toEqual([3]); // clamped to the end
    h = withPage(h, page(1_500, 2_000));
    expect(expectedRows(h, 3)).toBe(500);
    expect(missingPages(h, 1_900, 1_999)).toEqual([]);
    expect(rowAt(h, 1_999)?.event.seq).toBe(1_999 - INHERITED + 1);
    expect(rowAt(h, 700)).toBeUndefined();
    expect(h.first?.pos).toBe(1);
    expect(h.last?.pos).toBe(2_000);
  });

  it('marks the inherited prefix and checkpoints on every page', () => {
    const h = withPage(withPage(EMPTY_HISTORY, page(0, 2_000)), page(500, 2_000));
    expect(rowAt(h, 299)).toMatchObject({ inherited: true });
    expect(rowAt(h, 300)).toMatchObject({ inherited: false });
    expect(rowAt(h, 507)?.checkpointId).toBe('cpt_508');
    expect(rowAt(h, 508)?.checkpointId).toBeUndefined();
  });

  it('appends live events of the run at their position, and reads again across a gap', () => {
    let h = withPage(EMPTY_HISTORY, page(0, 1_000));
    h = withPage(h, page(500, 1_000)); // 1000 = two full pages
    h = withLive(h, [ev(1_000), ev(1_001), event({ pos: 9, seq: 5, stream: 'run_other' })], OWN);
    expect(h.total).toBe(1_002);
    expect(rowAt(h, 1_001)?.event.seq).toBe(702);
    expect(h.segments[1]!.toSeq).toBe(702);
    expect(h.last?.seq).toBe(702);
    // A repeat is ignored; a gap grows the total, and the short page is read again.
    h = withLive(h, [ev(1_001)], OWN);
    expect(h.total).toBe(1_002);
    h = withLive(h, [ev(1_005)], OWN);
    expect(h.total).toBe(1_006);
    expect(rowAt(h, 1_005)).toBeUndefined();
    expect(missingPages(h, 1_000, 1_005)).toEqual([2]);
    // Live events on a page not read yet only grow the total.
    let far = withPage(EMPTY_HISTORY, page(0, 4_990));
    far = withLive(far, [ev(4_990)], OWN);
    expect(far.total).toBe(4_991);
    expect(far.pages.size).toBe(1);
  });

  it('keeps the pages nearest the view', () => {
    let h = EMPTY_HISTORY;
    for (let p = 0; p < KEEP_PAGES + 10; p++) h = withPage(h, page(p * PAGE_SIZE, (KEEP_PAGES + 10) * PAGE_SIZE));
    const kept = evict(h, 20 * PAGE_SIZE);
    expect(kept.pages.size).toBe(KEEP_PAGES);
    expect(kept.pages.has(20)).toBe(true);
    expect(kept.pages.has(KEEP_PAGES + 9)).toBe(false);
    expect(evict(kept, 0)).toBe(kept); // within the budget, nothing to drop
    expect(evict(withPage(EMPTY_HISTORY, page(0, 10)), 0).pages.size).toBe(1);
  });

  it('finds a seq: the own run first, then the oldest stream holding it', () => {
    const h = withPage(EMPTY_HISTORY, page(0, 1_000, 1));
    expect(indexOfSeq(h, 1, OWN)).toBe(INHERITED);
    expect(indexOfSeq(h, 700, OWN)).toBe(999);
    expect(indexOfSeq(h, 701, OWN)).toBe(-1);
    expect(indexOfSeq(h, 5, ROOT)).toBe(4);
    expect(indexOfSeq({ ...h, segments: [h.segments[0]!, { ...h.segments[1]!, toSeq: 2 }] }, 250, OWN)).toBe(249);
    expect(indexOfSeq(h, 0, OWN)).toBe(-1);
    expect(lanesOfSegments(h.segments)).toEqual([
      { stream: ROOT, index: 0, inherited: true, events: 300 },
      { stream: OWN, index: 1, inherited: false, events: 700 },
    ]);
  });
});

describe('search through a history', () => {
  it('turns the timeline filter into the backend one', () => {
    expect(isFiltered(NO_FILTER)).toBe(false);
    expect(isFiltered({ ...NO_FILTER, regex: true })).toBe(false);
    expect(isFiltered({ ...NO_FILTER, reality: 'world_local' })).toBe(true);
    expect(toHistoryFilter({ types: new Set(['b', 'a']), reality: 'all', text: 'x.*', regex: true })).toEqual({ types: ['a', 'b'], reality: '', text: 'x.*', regex: true });
  });

  it('collects matches stretch by stretch, starting over when a search starts over', () => {
    const m1 = { total: 1_000, inherited: INHERITED, matches: [{ index: 7, event: ev(7) }], from: 0, next: 400 };
    let f = withMatches(undefined, m1);
    expect(f.rows).toEqual([{ index: 7, event: ev(7), inherited: true }]);
    expect(searchDone(f)).toBe(false);
    f = withMatches(f, { ...m1, matches: [{ index: 900, event: ev(900) }], from: 400, next: 1_000 });
    expect(f.rows.map((r) => r.index)).toEqual([7, 900]);
    expect(f.rows[1]!.inherited).toBe(false);
    expect(searchDone(f)).toBe(true);
    expect(withMatches(f, { ...m1, from: 0 }).rows.map((r) => r.index)).toEqual([7]);
  });
});

describe('searchWhole', () => {
  const ev = (i: number) => event({ seq: i + 1, pos: i + 1, stream: 'run_a', type: i % 2 ? 'step.approved' : 'step.started' });
  // The backend answers in slices of 3 positions, as it answers after a slice of work.
  const sliced = async (_run: string, f: HistoryFilter, from: number, limit: number): Promise<HistoryMatches> => {
    const matches = [];
    let next = from;
    for (; next < Math.min(from + 3, 10) && matches.length < limit; next++) if (f.types.includes(ev(next).type)) matches.push({ index: next, event: ev(next) });
    return { total: 10, inherited: 0, from, next, matches };
  };
  const filter: HistoryFilter = { types: ['step.approved'], reality: '', text: '', regex: false };

  it('goes on from slice to slice to the end of the history', async () => {
    expect((await searchWhole(sliced, 'run_a', filter, 100)).map((e) => e.seq)).toEqual([2, 4, 6, 8, 10]);
  });

  it('stops at its limit', async () => {
    expect((await searchWhole(sliced, 'run_a', filter, 2)).map((e) => e.seq)).toEqual([2, 4]);
  });
});
