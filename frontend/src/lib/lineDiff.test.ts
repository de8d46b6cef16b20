import { describe, expect, it } from 'vitest';
import { LIMIT, lineDiff } from './lineDiff';

describe('lineDiff', () => {
  it('keeps the common lines and marks what goes and comes', () => {
    expect(lineDiff('one\ntwo\nthree', 'one\n2\nthree\nfour')).toEqual([
      { kind: 'same', text: 'one' },
      { kind: 'removed', text: 'two' },
      { kind: 'added', text: '2' },
      { kind: 'same', text: 'three' },
      { kind: 'added', text: 'four' },
    ]);
  });

  it('says nothing changed for the same text', () => {
    expect(lineDiff('a\nb', 'a\nb')?.every((l) => l.kind === 'same')).toBe(true);
  });

  it('gives up on texts too long to diff in the window', () => {
    expect(lineDiff('x\n'.repeat(LIMIT + 1), 'y')).toBeUndefined();
  });
});
