import { describe, expect, it } from 'vitest';
import { checkDelta, divergencesFor } from './fork';

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
