import { describe, expect, it } from 'vitest';
import type { DeliberationRound } from '../bridge';
import { appliedLine, roundLine, scoreText, spentLine, stopReason } from './round';

function round(over: Partial<DeliberationRound> = {}): DeliberationRound {
  return {
    deliberationIndex: 1,
    parentRunId: 'run_p',
    parentWorldId: 'wld_p',
    checkpointId: 'cpt_1',
    parentTime: 12,
    strategy: 'beam',
    depth: 3,
    seeds: [1],
    budget: { branches: 200, used: 104, steps: 300, deduplicated: 0, depth: 3, wallMs: 2100, stopped: 'exhausted' },
    candidates: [{ action: 'E', score: -26, mean: -27, visits: 4, line: ['E'], branches: [], bestBranches: [] }],
    chosen: 'E',
    ...over,
  };
}

describe('a deliberation round in words', () => {
  it('says why the search stopped', () => {
    const b = round().budget;
    expect(stopReason({ ...b, stopped: 'budget' }, 3, true)).toBe('its budget of 200 branches was spent');
    expect(stopReason({ ...b, stopped: 'time' }, 3, true)).toBe('its time limit ran out after 2.1 s');
    expect(stopReason(b, 3, true)).toBe('nothing was left to search within depth 3');
    expect(spentLine(round())).toBe('104 of 200 branches (searched everything within depth 3)');
    expect(spentLine(round({ budget: { ...b, stopped: 'time' } }))).toBe('104 of 200 branches (time limit reached)');
  });

  it('says whether the world took its choice', () => {
    expect(appliedLine(round())).toBe('not applied');
    expect(appliedLine(round({ appliedAt: 13 }))).toBe('applied: the world took "E" (t=13)');
  });

  it('gives a score its meaning', () => {
    expect(scoreText(-26)).toBe('score -26.00 (higher is better; the program’s score())');
    expect(roundLine(round())).toBe('beam, 104 of 200 branches (searched everything within depth 3): chose "E", score -26.00 (higher is better; the program’s score())');
  });
});
