import { describe, expect, it } from 'vitest';
import { checkDelta, divergencesFor, forkChange } from './fork';

describe('divergences', () => {
  it('offers plan edits for task runs only', () => {
    expect(divergencesFor('real').map((d) => d.id)).toEqual(['plan_edit']);
    expect(divergencesFor('simulated').map((d) => d.id)).not.toContain('plan_edit');
  });

  it('accepts each template that needs nothing more', () => {
    for (const d of divergencesFor('simulated')) {
      const err = checkDelta(d.id, d.template, 'derive');
      if (d.id === 'program_change') expect(err).toMatch(/program/);
      else expect(err).toBeUndefined();
    }
  });

  it('checks shapes as the backend does', () => {
    expect(checkDelta('state_patch', '[1]', 'inherit')).toMatch(/JSON object/);
    expect(checkDelta('state_patch', '{', 'inherit')).toMatch(/not valid JSON/);
    expect(checkDelta('action_override', '{"actions": []}', 'inherit')).toMatch(/at least one/);
    expect(checkDelta('seed_change', '{}', 'inherit')).toMatch(/derive or fresh/);
    expect(checkDelta('seed_change', '{"seed": 7}', 'inherit')).toBeUndefined();
    expect(checkDelta('seed_change', '{"seed": -1}', 'fresh')).toMatch(/whole number/);
    expect(checkDelta('state_patch', '', 'inherit')).toBeUndefined();
  });
});

describe('forkChange', () => {
  it('says what a fork changed in one line, as the Lineage does', () => {
    expect(forkChange({ pos: [0, 4] }, 'inherit')).toBe('{"pos":[0,4]}');
    expect(forkChange({ pos: [0, 4] }, 'derive')).toBe('{"pos":[0,4]} · seed derive');
    expect(forkChange({}, 'fresh')).toBe('only the seed · seed fresh');
    expect(forkChange({}, 'inherit')).toBe('nothing in its state (an empty delta)');
    expect(forkChange(null, 'inherit')).toBe('nothing in its state (an empty delta)');
    const long = forkChange({ actions: Array.from({ length: 30 }, () => 'E') }, 'inherit');
    expect(long).toHaveLength(61);
    expect(long.endsWith('…')).toBe(true);
  });
});
