import { describe, expect, it } from 'vitest';
import { event } from '../test/fixtures';
import {
  CLOCKS,
  NO_FILTER,
  clockDomain,
  clockValue,
  compileSearch,
  filterRows,
  lanesOf,
  mergeLive,
  rowOfSeq,
  toRows,
  typesOf,
  xOnAxis,
} from './timeline';

const parent = 'run_parent';
const own = 'run_own';
const history = [
  event({ seq: 1, pos: 1, stream: parent, type: 'world.initialized', payload: { seed: 1 }, worldLocalTime: 0 }),
  event({ seq: 2, pos: 2, stream: parent, type: 'world.step', payload: { action: 'N' }, worldLocalTime: 1 }),
  event({ seq: 3, pos: 3, stream: parent, type: 'world.checkpoint', payload: { checkpointId: 'cpt_1' }, worldLocalTime: 1 }),
  event({ seq: 1, pos: 9, stream: own, type: 'world.forked', reality: 'world_local', parentTime: 1, worldLocalTime: 1, recordedAt: '2025-03-12T14:05:00Z' }),
  event({ seq: 2, pos: 10, stream: own, type: 'world.step', reality: 'world_local', payload: { action: 'E' }, parentTime: 1, worldLocalTime: 2, recordedAt: '2025-03-12T14:06:00Z' }),
];

describe('toRows', () => {
  it('numbers from the page offset, marks the inherited prefix and checkpoints', () => {
    const rows = toRows(history, 0, 3);
    expect(rows.map((r) => r.inherited)).toEqual([true, true, true, false, false]);
    expect(rows[2]!.checkpointId).toBe('cpt_1');
    expect(rows[1]!.checkpointId).toBeUndefined();
    expect(toRows(history.slice(3), 3, 3).map((r) => r.index)).toEqual([3, 4]);
  });
});

describe('filters', () => {
  const rows = toRows(history, 0, 3);

  it('keeps everything without a filter', () => {
    expect(filterRows(rows, NO_FILTER).rows).toHaveLength(5);
  });

  it('filters by type, reality and text', () => {
    expect(filterRows(rows, { ...NO_FILTER, types: new Set(['world.step']) }).rows.map((r) => r.index)).toEqual([1, 4]);
    expect(filterRows(rows, { ...NO_FILTER, reality: 'world_local' }).rows.map((r) => r.index)).toEqual([3, 4]);
    expect(filterRows(rows, { ...NO_FILTER, text: '"e"' }).rows.map((r) => r.index)).toEqual([4]);
    expect(filterRows(rows, { ...NO_FILTER, text: 'cpt_1' }).rows.map((r) => r.index)).toEqual([2]);
  });

  it('searches with a regular expression and explains a broken one', () => {
    expect(filterRows(rows, { ...NO_FILTER, text: 'action":"[NE]"', regex: true }).rows.map((r) => r.index)).toEqual([1, 4]);
    const bad = filterRows(rows, { ...NO_FILTER, text: '(', regex: true });
    expect(bad.rows).toHaveLength(5);
    expect(bad.error).toMatch(/not a valid regular expression/);
    expect(compileSearch('[', true).ok).toBe(false);
    expect(compileSearch('[', false).ok).toBe(true);
  });

  it('counts the types present', () => {
    expect(typesOf(rows)[0]).toEqual({ type: 'world.step', count: 2 });
  });
});

describe('clocks and lanes', () => {
  const rows = toRows(history, 0, 3);

  it('reads each clock', () => {
    const e = history[4]!;
    expect(clockValue(e, 'parentTime')).toBe(1);
    expect(clockValue(e, 'worldLocalTime')).toBe(2);
    expect(clockValue(e, 'deliberationIndex')).toBe(0);
    expect(clockValue(e, 'recorded')).toBe(Date.parse('2025-03-12T14:06:00Z'));
  });

  it('places values on the axis', () => {
    const d = clockDomain(rows, 'worldLocalTime');
    expect(d).toEqual({ min: 0, max: 2 });
    expect(xOnAxis(0, d, 112, 6)).toBe(6);
    expect(xOnAxis(2, d, 112, 6)).toBe(106);
    expect(xOnAxis(1, d, 112, 6)).toBe(56);
    expect(xOnAxis(5, { min: 5, max: 5 }, 100)).toBe(50);
    expect(clockDomain([], 'recorded')).toEqual({ min: 0, max: 0 });
  });

  it('makes one lane per stream, ancestors first', () => {
    expect(lanesOf(rows)).toEqual([
      { stream: parent, index: 0, inherited: true, events: 3 },
      { stream: own, index: 1, inherited: false, events: 2 },
    ]);
  });
});

describe('rowOfSeq', () => {
  const rows = toRows(history, 0, 3);
  it('prefers the own stream, then any', () => {
    expect(rowOfSeq(rows, 2, own)).toBe(4);
    expect(rowOfSeq(rows, 3, own)).toBe(2);
    expect(rowOfSeq(rows, 9, own)).toBe(-1);
  });
});

describe('mergeLive', () => {
  const rows = toRows(history, 0, 3);
  it('appends the next own events and ignores others, duplicates and gaps', () => {
    const next = event({ seq: 3, pos: 11, stream: own, type: 'world.step' });
    const dup = event({ seq: 2, pos: 10, stream: own });
    const other = event({ seq: 4, pos: 12, stream: 'run_x' });
    const out = mergeLive(rows, [dup, other, next], own, 3);
    expect(out.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(out[5]!.event.seq).toBe(3);
    expect(mergeLive(rows, [dup], own, 3)).toBe(rows);
    expect(mergeLive(rows, [event({ seq: 5, pos: 13, stream: own })], own, 3)).toHaveLength(5);
  });
});

describe('CLOCKS', () => {
  it('names each clock in words, with the ledger field in the hint', () => {
    expect(CLOCKS.map((c) => c.label)).toEqual(['Recorded time', 'Time in the parent', 'Deliberation round', 'World time']);
    for (const c of CLOCKS) expect(c.label).not.toMatch(/_/);
    expect(CLOCKS.find((c) => c.id === 'parentTime')!.hint).toContain('parent_time');
  });
});
