import { describe, expect, it } from 'vitest';
import { asGrid, trailOf } from './grid';

const state = {
  size: 9,
  pos: [0, 0],
  goal: [8, 8],
  walls: [
    [2, 0],
    [2, 1],
  ],
  params: { noise: 0.2 },
  steps: 0,
};

describe('asGrid', () => {
  it('reads the Branching Grid state', () => {
    expect(asGrid(state)).toEqual({ size: 9, pos: [0, 0], goal: [8, 8], walls: [[2, 0], [2, 1]], steps: 0, done: false });
    expect(asGrid({ ...state, pos: [8, 8] })?.done).toBe(true);
  });

  it('refuses other shapes', () => {
    expect(asGrid(null)).toBeUndefined();
    expect(asGrid([1, 2])).toBeUndefined();
    expect(asGrid({ ...state, size: 0 })).toBeUndefined();
    expect(asGrid({ ...state, size: 1e6 })).toBeUndefined();
    expect(asGrid({ ...state, pos: [9, 0] })).toBeUndefined();
    expect(asGrid({ ...state, pos: [0.5, 0] })).toBeUndefined();
    expect(asGrid({ ...state, walls: [[1]] })).toBeUndefined();
    expect(asGrid({ ...state, walls: undefined })).toBeUndefined();
    expect(asGrid({ count: 3 })).toBeUndefined();
  });
});

describe('trailOf', () => {
  it('follows moved events', () => {
    expect(
      trailOf([
        { type: 'moved', from: [0, 0], to: [0, 1] },
        { type: 'goal_reached', at: [0, 1] },
        { type: 'moved', to: [1, 1] },
        'noise',
        null,
      ]),
    ).toEqual([
      [0, 1],
      [1, 1],
    ]);
  });
});
