import { expect, it } from 'vitest';
import { appendTokens } from './tokens';

it('keeps a bounded tail per step of one run', () => {
  const s0 = {};
  const s1 = appendTokens(s0, [{ runId: 'r', text: 'Hel' }, { runId: 'x', text: 'no' }, { runId: 'r', text: 'lo' }], 'r');
  expect(s1).toEqual({ '': 'Hello' });
  const s2 = appendTokens(s1, [{ runId: 'r', stepId: 'step-2', text: 'import os' }], 'r');
  expect(s2).toEqual({ '': 'Hello', 'step-2': 'import os' });
  expect(appendTokens(s2, [{ runId: 'x', text: 'a' }], 'r')).toBe(s2);
  expect(appendTokens({}, [{ runId: 'r', text: 'abcdef' }], 'r', 4)).toEqual({ '': 'cdef' });
});
