import { describe, expect, it } from 'vitest';
import type { DeliberationRound, LineageOutline } from '../bridge/types';
import { deliberatingWorlds, searchOverlay } from './deliberationTree';
import { buildLineageOutline } from './lineage';

// grid (run_g) deliberated twice: round 1 tried a1 (then a1x) and b1; round
// 2 tried a2 and b2 (then b2x). A plain fork of grid is no branch.
function outline(): LineageOutline {
  const w = (id: string, parent?: string, round?: number) => ({
    id,
    name: id,
    domain: 'simulated' as const,
    createdAt: '2026-12-01T10:00:00Z',
    runs: 1,
    runId: `run_${id}`,
    status: 'running' as const,
    ...(parent ? { parent } : {}),
    ...(round ? { round } : {}),
  });
  const worlds = [w('grid'), w('fork', 'grid'), w('a1', 'grid', 1), w('a1x', 'a1', 1), w('b1', 'grid', 1), w('a2', 'grid', 2), w('b2', 'grid', 2), w('b2x', 'b2', 2)];
  return {
    worlds,
    forks: worlds.filter((x) => x.parent).map((x) => ({ id: `frk_${x.id}`, from: x.parent!, to: x.id, divergence: 'action_override' as const, at: 0 })),
  };
}

function round(index: number, scores: Record<string, number>, best: string): DeliberationRound {
  return {
    deliberationIndex: index,
    parentRunId: 'run_grid',
    parentWorldId: 'grid',
    checkpointId: 'cpt',
    parentTime: 0,
    strategy: 'beam',
    depth: 2,
    seeds: [1],
    budget: { branches: 10, used: 3, steps: 3, deduplicated: 0, depth: 2, wallMs: 1, stopped: 'exhausted' },
    candidates: [{ action: 'E', score: 0, mean: 0, visits: 1, line: ['E'], branches: [], bestBranches: [best] }],
    chosen: 'E',
    scores,
  };
}

describe('searchOverlay', () => {
  const m = buildLineageOutline(outline());

  it('finds the world that deliberated and the run to read its rounds from', () => {
    expect([...deliberatingWorlds(m)]).toEqual([['grid', 'run_grid']]);
  });

  it('tones each branch by its score within its round, marks the chosen line and folds older rounds', () => {
    const o = searchOverlay(m, new Map([['grid', [round(1, { a1: -10, a1x: -8, b1: -12 }, 'a1x'), round(2, { a2: -5, b2: -4, b2x: -4 }, 'b2x')]]]));
    expect(o.rounds).toBe(2);
    expect(Object.fromEntries(o.tone)).toEqual({ a1: 2, a1x: 4, b1: 0, a2: 0, b2: 4, b2x: 4 });
    expect(o.score.get('a1x')).toBe(-8);
    expect([...o.chosen].sort()).toEqual(['a1', 'a1x', 'b2', 'b2x']);
    expect([...o.olderRounds].sort()).toEqual(['a1', 'b1']);
    expect([...o.unrecorded], 'every branch was scored by its round').toEqual([]);
  });

  it('folds the branches of a round that has no record (a cancelled search), and counts them', () => {
    // Round 2 was cancelled: its branches were recorded, the round was not.
    const o = searchOverlay(m, new Map([['grid', [round(1, { a1: -10, a1x: -8, b1: -12 }, 'a1x')]]]));
    expect([...o.unrecorded].sort()).toEqual(['a2', 'b2']);
    expect(o.unrecordedBranches).toBe(3);
    expect([...o.olderRounds], 'round 1 is the latest recorded: drawn whole').toEqual([]);
    expect(o.rounds).toBe(1);
    // The cancelled search took index 2, and so did the round recorded after it: known by their scores.
    const after = searchOverlay(m, new Map([['grid', [round(1, { a1: -10, a1x: -8, b1: -12 }, 'a1x'), round(2, { b2: -4, b2x: -4 }, 'b2x')]]]));
    expect([...after.unrecorded]).toEqual(['a2']);
    expect(after.unrecordedBranches).toBe(1);
    // A world whose only round was cancelled.
    const none = searchOverlay(m, new Map([['grid', []]]));
    expect([...none.unrecorded].sort()).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(none.unrecordedBranches).toBe(6);
    expect(none.rounds).toBe(0);
  });

  it('folds a large latest round to its chosen line: every branch beside the line folds its subtree', () => {
    const big = round(2, { a2: -5, b2: -4, b2x: -4 }, 'b2x');
    big.budget = { ...big.budget, used: 20_000, branches: 20_000 };
    const o = searchOverlay(m, new Map([['grid', [round(1, { a1: -10, a1x: -8, b1: -12 }, 'a1x'), big]]]));
    expect([...o.chosen].sort()).toEqual(['a1', 'a1x', 'b2', 'b2x']);
    expect([...o.offLine]).toEqual(['a2']);
    expect(o.offLineBranches).toBe(20_000);
    expect([...o.olderRounds].sort()).toEqual(['a1', 'b1']);
    // A round of a few branches is drawn whole.
    const small = searchOverlay(m, new Map([['grid', [round(1, { a1: -10, a1x: -8, b1: -12 }, 'a1x'), round(2, { a2: -5, b2: -4, b2x: -4 }, 'b2x')]]]));
    expect(small.offLine.size).toBe(0);
    expect(small.offLineBranches).toBe(0);
  });

  it('draws a round without scores (recorded before they were kept) untoned, and ignores worlds not in the lineage', () => {
    const r = round(1, {}, 'a1x');
    delete r.scores;
    const o = searchOverlay(m, new Map([['grid', [r, round(2, { gone: -1, a2: -3 }, 'nowhere')]]]));
    expect(o.tone.get('a1')).toBeUndefined();
    expect(o.tone.get('gone')).toBeUndefined();
    expect(o.tone.get('a2')).toBe(4);
    expect([...o.chosen].sort()).toEqual(['a1', 'a1x']);
  });
});
